import type { LayerSpec } from './graph.js';

/** Shape and cost facts of one layer, derived from its spec and its input shape (batch excluded). */
export interface LayerFacts {
  outputShape: number[];
  params: number;
  forwardFlops: number;
  backwardFlops: number;
}

const product = (dims: number[]) => dims.reduce((a, b) => a * b, 1);

function convOutputSize(size: number, kernel: number, stride: number, padding: 'same' | 'valid'): number {
  return padding === 'same' ? Math.ceil(size / stride) : Math.floor((size - kernel) / stride) + 1;
}

export function layerFacts(spec: LayerSpec, inputShape: number[]): LayerFacts {
  switch (spec.kind) {
    case 'input':
      return { outputShape: [...spec.shape], params: 0, forwardFlops: 0, backwardFlops: 0 };
    case 'dense': {
      if (inputShape.length !== 1) {
        throw new Error(`A dense layer needs a flat input, got shape [${inputShape}]; add a flatten layer before it.`);
      }
      const fanIn = inputShape[0];
      const macs = fanIn * spec.units;
      // Backward computes both the input gradient and the weight gradient: twice the forward work.
      return { outputShape: [spec.units], params: macs + spec.units, forwardFlops: 2 * macs, backwardFlops: 4 * macs };
    }
    case 'conv2d': {
      if (inputShape.length !== 3) throw new Error(`conv2d needs an [height, width, channels] input, got [${inputShape}].`);
      const [h, w, c] = inputShape;
      const [kh, kw] = spec.kernelSize;
      const oh = convOutputSize(h, kh, spec.strides[0], spec.padding);
      const ow = convOutputSize(w, kw, spec.strides[1], spec.padding);
      if (oh <= 0 || ow <= 0) throw new Error(`conv2d kernel ${kh}x${kw} is larger than its ${h}x${w} input.`);
      const macs = oh * ow * spec.filters * kh * kw * c;
      return {
        outputShape: [oh, ow, spec.filters],
        params: kh * kw * c * spec.filters + spec.filters,
        forwardFlops: 2 * macs,
        backwardFlops: 4 * macs,
      };
    }
    case 'maxPool2d': {
      if (inputShape.length !== 3) throw new Error(`maxPool2d needs an [height, width, channels] input, got [${inputShape}].`);
      const [h, w, c] = inputShape;
      const oh = Math.floor((h - spec.poolSize[0]) / spec.strides[0]) + 1;
      const ow = Math.floor((w - spec.poolSize[1]) / spec.strides[1]) + 1;
      const compares = oh * ow * c * spec.poolSize[0] * spec.poolSize[1];
      return { outputShape: [oh, ow, c], params: 0, forwardFlops: compares, backwardFlops: compares };
    }
    case 'flatten':
      return { outputShape: [product(inputShape)], params: 0, forwardFlops: 0, backwardFlops: 0 };
    case 'reshape': {
      if (product(spec.targetShape) !== product(inputShape)) {
        throw new Error(`reshape to [${spec.targetShape}] does not keep the ${product(inputShape)} elements of [${inputShape}].`);
      }
      return { outputShape: [...spec.targetShape], params: 0, forwardFlops: 0, backwardFlops: 0 };
    }
  }
}
