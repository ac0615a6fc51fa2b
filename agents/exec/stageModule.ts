import * as tf from '@tensorflow/tfjs-core';
// tfjs-core ships its gradient functions separately; the stage's backward pass needs them.
import '@tensorflow/tfjs-core/dist/register_all_gradients';
import type { LayerNode, ModelGraph } from '../../engine/model/graph.js';
import { applyLayer, layerParams, type ParamSpec } from './layerOps.js';
import { crossEntropySum } from './loss.js';

/**
 * The contiguous run of layers one agent executes: its parameters, a forward pass, and a backward pass
 * that accumulates parameter gradients over micro-batches and returns the gradient of its input.
 *
 * Backward recomputes the forward pass from the stashed stage input (activation recomputation): the
 * stage keeps one input tensor per micro-batch in flight instead of every intermediate activation.
 */
/** tfjs needs globally unique variable names; several stages may live in one process (tests). */
let nextVariableId = 0;

export class StageModule {
  readonly params: tf.Variable[];
  readonly paramSpecs: ParamSpec[];
  private readonly layerParamCount: number[];
  private gradients: tf.Tensor[] | null = null;

  private constructor(
    readonly layers: LayerNode[],
    readonly inputShape: number[],
    readonly isFirst: boolean,
    readonly isLast: boolean,
    seed: number,
  ) {
    this.paramSpecs = [];
    this.layerParamCount = [];
    let shape = inputShape;
    for (const layer of layers) {
      const specs = layerParams(layer, shape, seed);
      this.paramSpecs.push(...specs);
      this.layerParamCount.push(specs.length);
      shape = layer.outputShape;
    }
    this.params = this.paramSpecs.map((p) => tf.variable(tf.tensor(p.init, p.shape), true, `${p.name}#${nextVariableId++}`));
  }

  static create(graph: ModelGraph, layerIds: string[], seed: number): StageModule {
    const index = new Map(graph.layers.map((l, i) => [l.id, i]));
    const positions = layerIds.map((id) => {
      const i = index.get(id);
      if (i === undefined) throw new Error(`Stage layer "${id}" is not in model "${graph.name}".`);
      return i;
    });
    const first = Math.min(...positions);
    const last = Math.max(...positions);
    const layers = graph.layers.slice(first, last + 1);
    if (layers.length !== layerIds.length) {
      throw new Error(`Stage layers [${layerIds.join(', ')}] are not a contiguous run of "${graph.name}".`);
    }
    const inputShape = first === 0 ? (layers[0].spec.kind === 'input' ? layers[0].outputShape : []) : graph.layers[first - 1].outputShape;
    return new StageModule(layers, inputShape, first === 0, last === graph.layers.length - 1, seed);
  }

  get outputShape(): number[] {
    return this.layers[this.layers.length - 1].outputShape;
  }

  private run(x: tf.Tensor, params: tf.Tensor[]): tf.Tensor {
    let y = x;
    let offset = 0;
    this.layers.forEach((layer, i) => {
      const count = this.layerParamCount[i];
      y = applyLayer(layer, y, params.slice(offset, offset + count));
      offset += count;
    });
    return y;
  }

  /** Forward pass without gradients: the activation sent downstream, or the logits of the last stage. */
  forward(x: tf.Tensor): tf.Tensor {
    // Always a new tensor, even for a pass-through stage, so callers may dispose input and output freely.
    return tf.tidy(() => {
      const y = this.run(x, this.params);
      return y === x ? x.clone() : y;
    });
  }

  /**
   * Backward of a middle or first stage, given the gradient of its output. Returns the input gradient.
   * `weights` differentiates at other weights than the current ones (PipeMare's discrepancy correction).
   */
  backward(x: tf.Tensor, dy: tf.Tensor, weights?: tf.Tensor[]): tf.Tensor {
    // A stage of only pass-through layers (e.g. just the input) is the identity: its input gradient is dy.
    if (this.params.length === 0 && this.layers.every((l) => l.spec.kind === 'input')) return dy.clone();
    return tf.tidy(() => {
      const gradsOf = tf.grads((input: tf.Tensor, ...params: tf.Tensor[]) => this.run(input, params));
      const [dx, ...dParams] = gradsOf([x, ...(weights ?? this.params)], dy);
      this.accumulate(dParams);
      return dx;
    });
  }

  /**
   * Backward of the last stage: the loss of a micro-batch (summed, divided by the global batch) and its
   * input gradient. Parameter gradients are accumulated.
   */
  lossBackward(x: tf.Tensor, labels: tf.Tensor, globalBatch: number): { loss: number; dx: tf.Tensor } {
    let loss = 0;
    const dx = tf.tidy(() => {
      const valueAndGrads = tf.valueAndGrads((input: tf.Tensor, ...params: tf.Tensor[]) =>
        crossEntropySum(this.run(input, params), labels, globalBatch),
      );
      const { value, grads } = valueAndGrads([x, ...this.params]);
      loss = value.dataSync()[0];
      const [dInput, ...dParams] = grads;
      this.accumulate(dParams);
      return dInput;
    });
    return { loss, dx };
  }

  private accumulate(dParams: tf.Tensor[]): void {
    if (!this.gradients) {
      this.gradients = dParams.map((g) => tf.keep(g.clone()));
      return;
    }
    const next = this.gradients.map((acc, i) => tf.keep(tf.add(acc, dParams[i])));
    this.gradients.forEach((g) => g.dispose());
    this.gradients = next;
  }

  /** Take the accumulated gradients (zeros when nothing was accumulated) and reset the accumulators. */
  takeGradients(): tf.Tensor[] {
    const grads = this.gradients ?? this.params.map((p) => tf.zerosLike(p));
    this.gradients = null;
    return grads;
  }

  /** All parameters as one flat array, in `paramSpecs` order. */
  flatParams(): Float32Array {
    return flatten(this.params);
  }

  dispose(): void {
    this.params.forEach((p) => p.dispose());
    this.gradients?.forEach((g) => g.dispose());
  }
}

export function flatten(tensors: tf.Tensor[]): Float32Array {
  const total = tensors.reduce((n, t) => n + t.size, 0);
  const out = new Float32Array(total);
  let offset = 0;
  for (const t of tensors) {
    out.set(t.dataSync() as Float32Array, offset);
    offset += t.size;
  }
  return out;
}

/** Split a flat array back into tensors shaped like `like`. */
export function unflatten(flat: Float32Array, like: tf.Tensor[]): tf.Tensor[] {
  let offset = 0;
  return like.map((t) => {
    const part = flat.subarray(offset, offset + t.size);
    offset += t.size;
    return tf.tensor(part, t.shape, 'float32');
  });
}
