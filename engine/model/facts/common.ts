/** Shape and cost facts of one layer, derived from its spec and its input shapes (batch excluded). */
export interface LayerFacts {
  outputShape: number[];
  params: number;
  nonTrainableParams: number;
  forwardFlops: number;
  backwardFlops: number;
}

export const product = (dims: number[]): number => dims.reduce((a, b) => a * b, 1);

/**
 * Facts of a layer with `params` trainable weights. Backward computes both the input gradient and the
 * weight gradient, twice the forward work; a parameter-free layer only propagates its input gradient.
 */
export function facts(outputShape: number[], params: number, forwardFlops: number, nonTrainableParams = 0): LayerFacts {
  return { outputShape, params, nonTrainableParams, forwardFlops, backwardFlops: params > 0 ? 2 * forwardFlops : forwardFlops };
}

export function onlyInput(kind: string, inputs: number[][]): number[] {
  if (inputs.length !== 1) throw new Error(`${kind} takes one input, got ${inputs.length}.`);
  return inputs[0];
}

/** The input shape, checked to have `rank` axes (batch excluded); `expected` names them for the message. */
export function inputOfRank(kind: string, inputs: number[][], rank: number, expected: string): number[] {
  const shape = onlyInput(kind, inputs);
  if (shape.length !== rank) throw new Error(`${kind} needs an ${expected} input, got [${shape}].`);
  return shape;
}

/** Keras's conv_output_length: the size of one spatial axis after a convolution or pooling window. */
export function windowOutputSize(size: number, kernel: number, stride: number, padding: string, dilation = 1): number {
  const span = (kernel - 1) * dilation + 1;
  if (padding === 'same' || padding === 'causal') return Math.ceil(size / stride);
  return Math.floor((size - span) / stride) + 1;
}

/** Output spatial sizes of a window sweep, rejecting windows larger than the input. */
export function windowOutputSizes(kind: string, sizes: number[], kernel: number[], strides: number[], padding: string, dilation?: number[]): number[] {
  const out = sizes.map((n, i) => windowOutputSize(n, kernel[i], strides[i], padding, dilation ? dilation[i] : 1));
  if (out.some((n) => n <= 0)) throw new Error(`${kind} window ${kernel.join('x')} is larger than its ${sizes.join('x')} input.`);
  return out;
}

/** Normalise a Keras axis (negative counts from the end) to an index into a shape of `rank` axes. */
export function normaliseAxis(axis: number, rank: number): number {
  const a = axis < 0 ? rank + axis : axis;
  if (a < 0 || a >= rank) throw new Error(`axis ${axis} is out of range for a rank-${rank} input.`);
  return a;
}
