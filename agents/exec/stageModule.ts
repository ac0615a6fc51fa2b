import * as tf from '@tensorflow/tfjs-core';
// tfjs-core ships its gradient functions separately; the stage's backward pass needs them.
import '@tensorflow/tfjs-core/dist/register_all_gradients';
import type { LayerNode, ModelGraph } from '../../engine/model/graph.js';
import { GradientAccumulator } from './gradientAccumulator.js';
import { layerGradient } from './layerGradient.js';
import { applyLayer, layerParams, type ParamSpec } from './layerOps.js';
import { oneHotRows } from './labels.js';
import { countCorrect, crossEntropySum } from './loss.js';

/**
 * The contiguous run of layers one agent executes: its parameters, a forward pass, and a backward pass
 * that goes layer by layer from the last to the first, accumulating parameter gradients over
 * micro-batches and returning the gradient of the stage input.
 *
 * Activations: a training forward pass keeps every layer's output until the backward pass of its
 * micro-batch (the plan's `recompute: false`), or keeps only the stage input and recomputes the rest
 * when the backward pass comes (`recompute: true`: less memory, one more forward pass).
 *
 * The backward pass is a generator that yields after each layer with that layer's parameter indices:
 * run to the end it is an ordinary synchronous backward pass; the synchronous schedules instead pause
 * at each yield of a step's last backward pass, so that gradient buckets whose layers are done travel
 * while earlier layers still compute.
 */
/** tfjs needs globally unique variable names; several stages may live in one process (tests). */
let nextVariableId = 0;

export interface StageOptions {
  /** Keep activations from the forward pass for the backward pass (else recompute them). */
  keepActivations?: boolean;
}

/** What a backward pass yields after each layer: the indices (into params) of that layer's parameters. */
export type LayerDone = number[];

export class StageModule {
  readonly params: tf.Variable[];
  readonly paramSpecs: ParamSpec[];
  /** Index of each layer's first parameter in `params`, and one past the last layer's. */
  private readonly paramOffset: number[];
  private readonly gradients: GradientAccumulator;
  /** Layer outputs kept by training forward passes, by the input tensor they started from. */
  private readonly kept = new Map<tf.Tensor, tf.Tensor[]>();
  private readonly keepActivations: boolean;

  private constructor(
    readonly layers: LayerNode[],
    readonly inputShape: number[],
    readonly isFirst: boolean,
    readonly isLast: boolean,
    seed: number,
    options: StageOptions,
  ) {
    this.paramSpecs = [];
    this.paramOffset = [0];
    let shape = inputShape;
    for (const layer of layers) {
      const specs = layerParams(layer, shape, seed);
      this.paramSpecs.push(...specs);
      this.paramOffset.push(this.paramSpecs.length);
      shape = layer.outputShape;
    }
    this.params = this.paramSpecs.map((p) => tf.variable(tf.tensor(p.init, p.shape), true, `${p.name}#${nextVariableId++}`));
    this.gradients = new GradientAccumulator(this.params);
    this.keepActivations = options.keepActivations ?? false;
  }

  static create(graph: ModelGraph, layerIds: string[], seed: number, options: StageOptions = {}): StageModule {
    const { layers, inputShape, isFirst, isLast } = stageLayers(graph, layerIds);
    return new StageModule(layers, inputShape, isFirst, isLast, seed, options);
  }

  get outputShape(): number[] {
    return this.layers[this.layers.length - 1].outputShape;
  }

  private layerParams(i: number, params: tf.Tensor[]): tf.Tensor[] {
    return params.slice(this.paramOffset[i], this.paramOffset[i + 1]);
  }

  /** Every layer's output, each a tensor of its own (kept: the caller disposes them). */
  private activations(x: tf.Tensor, params: tf.Tensor[]): tf.Tensor[] {
    const outputs: tf.Tensor[] = [];
    let y = x;
    this.layers.forEach((layer, i) => {
      const next = tf.tidy(() => applyLayer(layer, y, this.layerParams(i, params)));
      y = next === y ? next.clone() : next;
      outputs.push(y);
    });
    return outputs;
  }

  /** Forward pass without gradients (evaluation): the activation sent downstream, or the logits. */
  forward(x: tf.Tensor): tf.Tensor {
    // Always a new tensor, even for a pass-through stage, so callers may dispose input and output freely.
    return tf.tidy(() => {
      const y = this.apply(x, this.params);
      return y === x ? x.clone() : y;
    });
  }

  /** Every layer on x with the given parameters (ops only: the caller tidies or records a tape). */
  private apply(x: tf.Tensor, params: tf.Tensor[]): tf.Tensor {
    let y = x;
    this.layers.forEach((layer, i) => (y = applyLayer(layer, y, this.layerParams(i, params))));
    return y;
  }

  /**
   * Training forward pass of a micro-batch whose backward pass follows later: returns the output (a
   * new tensor) and keeps the activations under `x` unless the stage recomputes them.
   */
  trainForward(x: tf.Tensor): tf.Tensor {
    if (!this.keepActivations) return this.forward(x);
    const outputs = this.activations(x, this.params);
    this.kept.set(x, outputs);
    return outputs[outputs.length - 1].clone();
  }

  /** Kept activations of the micro-batches in flight (for memory accounting). */
  keptTensors(): tf.Tensor[] {
    return [...this.kept.values()].flat();
  }

  /**
   * Backward from the gradient of the stage output, layer by layer, yielding each layer's parameter
   * indices once its gradients are accumulated; returns the input gradient (null on the first
   * stage). `weights` differentiates at other weights than the current ones (PipeMare's discrepancy
   * correction); the activations are then recomputed at those weights.
   */
  *backwardSteps(x: tf.Tensor, dy: tf.Tensor, weights?: tf.Tensor[]): Generator<LayerDone, tf.Tensor | null> {
    const kept = weights ? undefined : this.kept.get(x);
    this.kept.delete(x);
    const outputs = kept ?? this.activations(x, weights ?? this.params);
    return yield* this.backwardFrom(x, outputs, dy, weights ?? this.params);
  }

  private *backwardFrom(x: tf.Tensor, outputs: tf.Tensor[], dy: tf.Tensor, params: tf.Tensor[]): Generator<LayerDone, tf.Tensor | null> {
    let grad = dy;
    try {
      for (let i = this.layers.length - 1; i >= 0; i--) {
        const input = i === 0 ? x : outputs[i - 1];
        const needInput = i > 0 || !this.isFirst;
        const { dx, dParams } = layerGradient(this.layers[i], input, outputs[i], grad, this.layerParams(i, params), needInput);
        const indices = dParams.map((_, j) => this.paramOffset[i] + j);
        indices.forEach((k, j) => this.gradients.add(k, dParams[j]));
        if (grad !== dy) grad.dispose();
        grad = dx ?? dy;
        yield indices;
        if (!dx) break;
      }
    } finally {
      outputs.forEach((t) => t.dispose());
    }
    return grad === dy ? (this.isFirst ? null : dy.clone()) : grad;
  }

  /** Synchronous backward pass (see backwardSteps). */
  backward(x: tf.Tensor, dy: tf.Tensor, weights?: tf.Tensor[]): tf.Tensor | null {
    return drain(this.backwardSteps(x, dy, weights));
  }

  /**
   * Last stage: forward, loss of the micro-batch (summed, divided by the global batch), and backward,
   * yielding per layer like backwardSteps; returns the loss and the input gradient.
   */
  *lossBackwardSteps(x: tf.Tensor, classes: Int32Array, globalBatch: number): Generator<LayerDone, { loss: number; dx: tf.Tensor | null }> {
    const outputs = this.activations(x, this.params);
    let loss = 0;
    const dLogits = tf.tidy(() => {
      const labels = this.targets(classes);
      const { value, grad } = tf.valueAndGrad((z: tf.Tensor) => crossEntropySum(z, labels, globalBatch))(outputs[outputs.length - 1]);
      loss = value.dataSync()[0];
      return grad;
    });
    try {
      const dx = yield* this.backwardFrom(x, outputs, dLogits, this.params);
      return { loss, dx };
    } finally {
      dLogits.dispose();
    }
  }

  /**
   * The same as lossBackwardSteps run to its end, recorded as one tape over the whole stage: faster
   * when nothing needs the gradients layer by layer (measured in bench/zooExecutor.ts: the per-layer
   * pass costs about 15% more on a last stage, where the forward runs just before anyway).
   */
  lossBackward(x: tf.Tensor, classes: Int32Array, globalBatch: number): { loss: number; dx: tf.Tensor | null } {
    let loss = 0;
    const out = tf.tidy(() => {
      const labels = this.targets(classes);
      const run = (input: tf.Tensor, ...p: tf.Tensor[]) => crossEntropySum(this.apply(input, p), labels, globalBatch);
      const { value, grads } = this.isFirst
        ? tf.valueAndGrads((...p: tf.Tensor[]) => run(x, ...p))(this.params)
        : tf.valueAndGrads(run)([x, ...this.params]);
      loss = value.dataSync()[0];
      return grads;
    });
    const dParams = this.isFirst ? out : out.slice(1);
    dParams.forEach((g, k) => this.gradients.add(k, g));
    return { loss, dx: this.isFirst ? null : out[0] };
  }

  /** One-hot targets as wide as the logits, for class indices. */
  private targets(classes: Int32Array): tf.Tensor2D {
    const width = this.outputShape[this.outputShape.length - 1];
    return tf.tensor2d(oneHotRows(classes, width), [classes.length, width]);
  }

  /** Last stage, evaluation: correct predictions and the summed loss of a batch. */
  evaluate(x: tf.Tensor, classes: Int32Array): { correct: number; lossSum: number } {
    return tf.tidy(() => {
      const logits = this.forward(x);
      const labels = this.targets(classes);
      return { correct: countCorrect(logits, labels), lossSum: crossEntropySum(logits, labels, 1).dataSync()[0] };
    });
  }

  /** Take parameter k's accumulated gradient (zeros when none) and reset its accumulator. */
  takeGradient(k: number): tf.Tensor {
    return this.gradients.take(k);
  }

  /** Take every accumulated gradient (zeros where nothing was accumulated) and reset the accumulators. */
  takeGradients(): tf.Tensor[] {
    return this.gradients.takeAll();
  }

  /** All parameters as one flat array, in `paramSpecs` order. */
  flatParams(): Float32Array {
    return flatten(this.params);
  }

  dispose(): void {
    this.params.forEach((p) => p.dispose());
    this.gradients.dispose();
    this.keptTensors().forEach((t) => t.dispose());
  }
}

/** Run a backward generator to its end without pausing. */
export function drain<T>(steps: Generator<LayerDone, T>): T {
  for (;;) {
    const next = steps.next();
    if (next.done) return next.value;
  }
}

/** Resolve a stage's layer ids against the model: the layers, the stage's input shape and its position. */
export function stageLayers(graph: ModelGraph, layerIds: string[]): { layers: LayerNode[]; inputShape: number[]; isFirst: boolean; isLast: boolean } {
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
  return { layers, inputShape, isFirst: first === 0, isLast: last === graph.layers.length - 1 };
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
