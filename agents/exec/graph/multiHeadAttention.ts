import * as tf from '@tensorflow/tfjs-core';
// tfjs-layers 4.22 ships MultiHeadAttention outside its package index; importing the module registers
// tfjs's class, which the class below then replaces in the registry (tfjs keeps the last registration).
// Only deep ESM paths of tfjs-layers are imported at run time: the agent bundle resolves the package to
// the same ESM files (esbuild's mainFields: module first), so there is one copy of each class.
import { nameScope } from '@tensorflow/tfjs-layers/dist/common.js';
import type { SymbolicTensor } from '@tensorflow/tfjs-layers/dist/engine/topology.js';
import { getInitializer } from '@tensorflow/tfjs-layers/dist/initializers.js';
import type { Shape } from '@tensorflow/tfjs-layers/dist/keras_format/common.js';
import type { EinsumDense } from '@tensorflow/tfjs-layers/dist/layers/nlp/einsum_dense.js';
import { MultiHeadAttention as TfjsMultiHeadAttention } from '@tensorflow/tfjs-layers/dist/layers/nlp/multihead_attention.js';
import type { Kwargs } from '@tensorflow/tfjs-layers/dist/types.js';
import type { LayerVariable } from '@tensorflow/tfjs-layers/dist/variables.js';
import { mixSeeds } from '../../../engine/util/prng.js';

/** Draws the keep-mask (scaled by 1 / (1 − rate)) of attention scores shaped `shape` ([rows, heads, T, S]). */
export type AttentionDropoutMask = (shape: number[]) => tf.Tensor;

/** A tensor reference in a Keras 2 call's keyword arguments: `[layer name, node index, tensor index]`. */
type TensorRef = [string, number, number, ...unknown[]];

const isRef = (v: unknown): v is TensorRef => Array.isArray(v) && typeof v[0] === 'string' && typeof v[1] === 'number' && typeof v[2] === 'number';
const isShape = (v: unknown): v is Shape => Array.isArray(v) && v.every((d) => d === null || typeof d === 'number');
/** tfjs-layers camel-cases every string of a Python config it reads, names in keyword arguments included. */
const camel = (s: string) => (s.length > 1 && s.includes('_') ? s.replace(/[_]+(\w|$)/g, (_m, c: string) => c.toUpperCase()) : s);

const isIdentity = (perm: number[]) => perm.every((p, i) => p === i);
const product = (dims: number[]) => dims.reduce((x, y) => x * y, 1);

/**
 * A two-operand einsum (`"abc,cde->abde"`: no ellipsis, no letter twice in one operand) as one batched
 * matMul between transposes and reshapes. tfjs's `einsum` has no gradient in 4.22, the wasm backend has
 * no Einsum kernel, and the cpu kernel multiplies out every index before summing; these ops all have
 * gradients and wasm kernels. Letters in both operands and the output are batch axes, in both but not
 * the output are contracted, in one operand and the output are that operand's free axes, in one
 * operand only are summed first.
 */
export function einsumMatMul(equation: string, a: tf.Tensor, b: tf.Tensor): tf.Tensor {
  const match = /^([a-zA-Z]+),([a-zA-Z]+)->([a-zA-Z]*)$/.exec(equation.replace(/\s/g, ''));
  if (!match) throw new Error(`einsum "${equation}": only two operands without ellipsis are supported.`);
  return tf.tidy(() => {
    const [, inA, inB, out] = match;
    for (const [s, t] of [[inA, a], [inB, b]] as const) {
      if (new Set(s).size !== s.length || s.length !== t.rank) throw new Error(`einsum "${equation}": operand "${s}" does not fit a tensor of shape [${t.shape}].`);
    }
    const size = new Map<string, number>();
    for (const [s, t] of [[inA, a], [inB, b]] as const) {
      [...s].forEach((c, i) => {
        if (size.has(c) && size.get(c) !== t.shape[i]) throw new Error(`einsum "${equation}": axis "${c}" is ${size.get(c)} in one operand and ${t.shape[i]} in the other.`);
        size.set(c, t.shape[i]);
      });
    }
    for (const c of out) if (!size.has(c)) throw new Error(`einsum "${equation}": output axis "${c}" is in no operand.`);
    // Letters in one operand only, not in the output: summed out first.
    const reduceOnly = (x: tf.Tensor, s: string, other: string): [tf.Tensor, string] => {
      const axes = [...s].flatMap((c, i) => (other.includes(c) || out.includes(c) ? [] : [i]));
      return axes.length === 0 ? [x, s] : [tf.sum(x, axes), [...s].filter((_, i) => !axes.includes(i)).join('')];
    };
    const [x, sa] = reduceOnly(a, inA, inB);
    const [y, sb] = reduceOnly(b, inB, inA);
    const batch = [...out].filter((c) => sa.includes(c) && sb.includes(c));
    const contracted = [...sa].filter((c) => sb.includes(c) && !out.includes(c));
    const freeA = [...out].filter((c) => sa.includes(c) && !sb.includes(c));
    const freeB = [...out].filter((c) => sb.includes(c) && !sa.includes(c));
    const dims = (letters: string[]) => letters.map((c) => size.get(c)!);
    const [B, M, K, N] = [product(dims(batch)), product(dims(freeA)), product(dims(contracted)), product(dims(freeB))];
    // Each operand as [batch, free, contracted] or [batch, contracted, free], whichever needs no transpose.
    const layout = (t: tf.Tensor, s: string, free: string[], rows: number): { m: tf.Tensor; transposed: boolean } => {
      const asIs = [...batch, ...free, ...contracted].map((c) => s.indexOf(c));
      const flipped = [...batch, ...contracted, ...free].map((c) => s.indexOf(c));
      const transposed = !isIdentity(asIs) && isIdentity(flipped);
      const perm = transposed ? flipped : asIs;
      const moved = isIdentity(perm) ? t : tf.transpose(t, perm);
      return { m: tf.reshape(moved, transposed ? [B, K, rows] : [B, rows, K]), transposed };
    };
    const left = layout(x, sa, freeA, M);
    const right = layout(y, sb, freeB, N);
    const product3 = tf.matMul(left.m, right.m, left.transposed, !right.transposed); // [B, M, N]
    const natural = [...batch, ...freeA, ...freeB];
    const result = tf.reshape(product3, dims(natural));
    const perm = [...out].map((c) => natural.indexOf(c));
    return isIdentity(perm) ? result : tf.transpose(result, perm);
  });
}

/** `y + bias` (bias broadcast), passing the gradient to y only. */
export const addWithoutBiasGradient = (y: tf.Tensor, bias: tf.Tensor): tf.Tensor =>
  tf.customGrad((...args: Array<tf.Tensor | tf.GradSaveFunc>) => {
    const [a, b] = args as [tf.Tensor, tf.Tensor];
    return { value: tf.add(a, b), gradFunc: (dy: tf.Tensor) => [dy, tf.zerosLike(b)] };
  })(y, bias);

/**
 * Keras's MultiHeadAttention on tfjs-layers' own implementation (its projections, einsum equations,
 * masked softmax and output projection), with what tfjs 4.22's class lacks to be trained and saved:
 *
 * - Inputs as a list `[query, value, key?]`, as a saved model's node lists them, or as tfjs's
 *   `apply(query, { value, key })`; either way the node records the tensors as its inputs and only
 *   serialisable keyword arguments (`useCausalMask`), so `tfl.model(...)` builds, saves and loads.
 *   A Keras 2 file (tensorflowjs_converter) passes value and key as keyword tensor references
 *   `["layer", node, tensor]`: they are resolved among the tensors connected to the query.
 * - The four EinsumDense projections are built with the layer (from the input shapes, or from the
 *   config's `queryShape`/`valueShape`/`keyShape` at deserialisation) and their variables are the
 *   layer's `trainableWeights`/`nonTrainableWeights`/`weights`, named as Keras names them:
 *   `<layer>/query/kernel`, `…/query/bias`, `…/key/…`, `…/value/…`, `…/attention_output/…`.
 * - The causal mask a call recorded (`use_causal_mask` of a saved node) applies when a caller (tfjs's
 *   executor, which drops a node's keyword arguments) does not say.
 * - Attention dropout is Shoal's deterministic mask, given per call as `attentionDropoutMask`; a
 *   training call with dropout > 0 and no mask is refused (tfjs's Dropout draws from a global stream).
 * - Seeded initializers (Shoal seeds every initializer of a topology) get one seed per projection:
 *   tfjs clones the layer's initializer, seed included, so query, key and value would start equal.
 */
export class MultiHeadAttention extends TfjsMultiHeadAttention {
  static override readonly className = 'MultiHeadAttention';
  private pendingDropoutMask: AttentionDropoutMask | null = null;

  static override fromConfig<T extends tf.serialization.Serializable>(cls: tf.serialization.SerializableConstructor<T>, config: tf.serialization.ConfigDict): T {
    const { queryShape, valueShape, keyShape, ...args } = config;
    const layer = new cls(args) as unknown as MultiHeadAttention;
    // A saved layer remembers its input shapes (tfjs's getConfig, Keras 2's get_config): build now, so
    // the weights exist before any call. Otherwise the first (symbolic) call builds it.
    if (isShape(queryShape) && isShape(valueShape)) {
      nameScope(layer.name, () => layer.build([queryShape, valueShape, isShape(keyShape) ? keyShape : valueShape]));
    }
    return layer as unknown as T;
  }

  private sublayers(): EinsumDense[] {
    return [this.queryDense, this.keyDense, this.valueDense, this.outputDense].filter((l) => l != null);
  }

  override get trainableWeights(): LayerVariable[] {
    if (!this.trainable) return [];
    return [...super.trainableWeights, ...this.sublayers().flatMap((l) => l.trainableWeights)];
  }

  override set trainableWeights(weights: LayerVariable[]) {
    super.trainableWeights = weights;
  }

  override get nonTrainableWeights(): LayerVariable[] {
    const own = super.nonTrainableWeights;
    if (!this.trainable) return [...own, ...this.sublayers().flatMap((l) => l.weights)];
    return [...own, ...this.sublayers().flatMap((l) => l.nonTrainableWeights)];
  }

  override set nonTrainableWeights(weights: LayerVariable[]) {
    super.nonTrainableWeights = weights;
  }

  override get weights(): LayerVariable[] {
    return [...this.trainableWeights, ...this.nonTrainableWeights];
  }

  /** Input shapes `[query, value, key?]` (one shape: self-attention). */
  override build(inputShape: Shape | Shape[]): void {
    const shapes = isShape(inputShape) ? [inputShape, inputShape] : (inputShape as Shape[]);
    const [queryShape, valueShape] = shapes;
    const keyShape = shapes[2] ?? valueShape;
    if (!this.builtFromSignature) this.buildFromSignature(queryShape, valueShape, keyShape);
    const fast = (this as unknown as { fastWeightInitDuringBuild: boolean }).fastWeightInitDuringBuild;
    const outputInput = [...this.queryShape.slice(0, -1), this.numHeads, this.valueDim];
    const builds: Array<[EinsumDense, Shape]> = [
      [this.queryDense, this.queryShape],
      [this.keyDense, this.keyShape],
      [this.valueDense, this.valueShape],
      [this.outputDense, outputInput],
    ];
    for (const [layer, shape] of builds) {
      if (layer.built) continue;
      layer.setFastWeightInitDuringBuild(fast);
      // Weights are named `<scope>/<sublayer>/kernel`: the caller's scope is this layer's name.
      nameScope(layer.name, () => layer.build(shape));
    }
    this.built = true;
  }

  override buildFromSignature(queryShape: Shape, valueShape: Shape, keyShape?: Shape): void {
    super.buildFromSignature(queryShape, valueShape, keyShape);
    // Keras names the output projection `attention_output` (tfjs: `attentionOutput`): its weight names.
    this.outputDense.name = 'attention_output';
    for (const layer of this.sublayers()) {
      // EinsumDense's call, its einsum run as a matMul (see einsumMatMul).
      const projection = layer as unknown as { equation: string; activation?: { apply(x: tf.Tensor): tf.Tensor } };
      // The key's bias adds q·b to every score of a softmax row, which the softmax ignores: its exact
      // gradient is zero. Computed, it is rounding noise that differs with every batch slicing (and
      // that Adam would scale up to steps of the learning rate), so it is given as zero: every plan
      // then learns the same bias. The forward pass is unchanged.
      const addBias = layer === this.keyDense ? addWithoutBiasGradient : tf.add;
      layer.call = (inputs: tf.Tensor | tf.Tensor[]) =>
        tf.tidy(() => {
          let y = einsumMatMul(projection.equation, Array.isArray(inputs) ? inputs[0] : inputs, layer.kernel.read());
          if (layer.bias != null) y = addBias(y, layer.bias.read());
          return projection.activation ? projection.activation.apply(y) : y;
        });
      const sub = layer as unknown as { kernelInitializer: { getClassName(): string; getConfig(): tf.serialization.ConfigDict } };
      const config = sub.kernelInitializer.getConfig();
      if (typeof config.seed === 'number') {
        const seed = mixSeeds('multiHeadAttention', config.seed, layer.name) % 2147483647;
        sub.kernelInitializer = getInitializer({ className: sub.kernelInitializer.getClassName(), config: { ...config, seed } });
      }
    }
  }

  /** tfjs's computeAttention (its equations and masked softmax), its einsums run as matMuls and its dropout Shoal's. */
  protected override computeAttention(query: tf.Tensor, key: tf.Tensor, value: tf.Tensor, attentionMask?: tf.Tensor, training?: boolean): [tf.Tensor, tf.Tensor] {
    return tf.tidy(() => {
      const scaled = tf.mul(query, 1 / Math.sqrt(this.keyDim));
      const scores = this.maskedSoftmax(einsumMatMul(this.dotProductEquation, key, scaled), attentionMask);
      const output = einsumMatMul(this.combineEquation, this.dropScores(scores, training === true), value);
      return [output, scores];
    });
  }

  private dropScores(scores: tf.Tensor, training: boolean): tf.Tensor {
    if (!training || !(this.dropout > 0)) return scores;
    if (!this.pendingDropoutMask) {
      throw new Error(
        `MultiHeadAttention layer "${this.name}" has dropout ${this.dropout}: in training its mask must be Shoal's deterministic one (attentionDropoutMask), not tfjs's random Dropout. Set dropout to 0, or train it through Shoal's graph stages.`,
      );
    }
    return tf.mul(scores, this.pendingDropoutMask(scores.shape));
  }

  /** `[query, value, key?]` from a list, or the query with value and key in the keyword arguments. */
  private split<T>(inputs: T | T[], kwargs: Kwargs): { query: T; value: T; key: T | undefined; rest: Kwargs } {
    const { value: kwValue, key: kwKey, ...rest } = kwargs ?? {};
    const list = Array.isArray(inputs) ? inputs : [inputs];
    const query = list[0];
    const value = (list[1] ?? this.resolve(query, kwValue, 'value')) as T | undefined;
    const key = (list[2] ?? (kwKey == null ? undefined : this.resolve(query, kwKey, 'key'))) as T | undefined;
    if (query == null || value == null) throw new Error(`MultiHeadAttention layer "${this.name}" needs a query and a value (inputs [query, value, key?], or apply(query, { value, key })).`);
    for (const [k, v] of Object.entries(rest)) {
      if (k === 'attentionMask' && v != null && !(v instanceof tf.Tensor)) throw new Error(`MultiHeadAttention layer "${this.name}": an attention_mask computed by another layer is not supported.`);
      if (k === 'returnAttentionScores' && v === true) throw new Error(`MultiHeadAttention layer "${this.name}": return_attention_scores is not supported (one output).`);
    }
    return { query, value, key, rest };
  }

  /** A keyword argument's tensor: a tensor as given, or a Keras 2 reference found near the query. */
  private resolve(query: unknown, arg: unknown, what: string): unknown {
    if (!isRef(arg)) return arg;
    if (!query || typeof query !== 'object' || !('sourceLayer' in query)) throw new Error(`MultiHeadAttention layer "${this.name}": its ${what} is a reference ${JSON.stringify(arg)}, which only a model's graph can resolve.`);
    const [name, nodeIndex, tensorIndex] = arg;
    const seen = new Set<SymbolicTensor>();
    const queue: SymbolicTensor[] = [query as SymbolicTensor];
    while (queue.length > 0) {
      const t = queue.shift()!;
      if (seen.has(t)) continue;
      seen.add(t);
      const layer = t.sourceLayer;
      if ((layer.name === name || camel(layer.name) === name) && t.nodeIndex === nodeIndex && t.tensorIndex === tensorIndex) return t;
      for (const node of [...layer.inboundNodes, ...layer.outboundNodes]) queue.push(...node.inputTensors, ...node.outputTensors);
    }
    throw new Error(
      `MultiHeadAttention layer "${this.name}": its ${what} ${JSON.stringify(arg)} is not yet connected to its query. Save the model with tfjs (model.save), which lists query, value and key as the layer's inputs.`,
    );
  }

  override apply(inputs: tf.Tensor | tf.Tensor[] | SymbolicTensor | SymbolicTensor[], kwargs?: Kwargs): tf.Tensor | tf.Tensor[] | SymbolicTensor | SymbolicTensor[] {
    const { query, value, key, rest } = this.split<tf.Tensor | SymbolicTensor>(inputs, kwargs ?? {});
    const list = key === undefined ? [query, value] : [query, value, key];
    // Layer.apply (tfjs's MultiHeadAttention.apply insists on `kwargs.value`): the tensors become the
    // node's inputs, the remaining keyword arguments its (serialisable) call arguments.
    const layerApply = Object.getPrototypeOf(TfjsMultiHeadAttention.prototype).apply as (this: MultiHeadAttention, x: unknown, kw: Kwargs) => ReturnType<MultiHeadAttention['apply']>;
    return layerApply.call(this, list, rest);
  }

  override call(inputs: tf.Tensor | tf.Tensor[], kwargs: Kwargs): tf.Tensor {
    const { query, value, key, rest } = this.split<tf.Tensor>(inputs, kwargs ?? {});
    if (!this.built) nameScope(this.name, () => this.build([query.shape, value.shape, (key ?? value).shape]));
    const useCausalMask = typeof rest.useCausalMask === 'boolean' ? rest.useCausalMask : this.recordedCausalMask();
    this.pendingDropoutMask = (rest.attentionDropoutMask as AttentionDropoutMask | undefined) ?? null;
    try {
      return super.call(query, { value, key, useCausalMask, attentionMask: rest.attentionMask, training: rest.training === true });
    } finally {
      this.pendingDropoutMask = null;
    }
  }

  /** The `useCausalMask` every recorded call of the layer gave (false when none did). */
  private recordedCausalMask(): boolean {
    const flags = new Set(this.inboundNodes.map((n) => n.callArgs?.useCausalMask === true));
    if (flags.size > 1) throw new Error(`MultiHeadAttention layer "${this.name}" is called both with and without a causal mask: say useCausalMask in each call.`);
    return flags.has(true);
  }

  override computeOutputShape(inputShape: Shape | Array<Shape | null>): Shape {
    const shapes = isShape(inputShape) ? [inputShape, inputShape] : (inputShape as Shape[]);
    return super.computeOutputShape([shapes[0], shapes[1], shapes[2] ?? null]);
  }

  /** The output's mask is the query's (Keras). */
  override computeMask(_inputs: tf.Tensor | tf.Tensor[], mask?: tf.Tensor | tf.Tensor[]): tf.Tensor {
    return ((Array.isArray(mask) ? mask[0] : mask) ?? null) as tf.Tensor;
  }
}

// tfjs's computeCausalMask (private there) takes the band of a boolean tensor, which the wasm backend
// of tfjs 4.22 gets wrong (its bool `where` returns a different pattern): the lower triangle, written out.
(MultiHeadAttention.prototype as unknown as { computeCausalMask(query: tf.Tensor, value?: tf.Tensor): tf.Tensor }).computeCausalMask = function (query: tf.Tensor, value?: tf.Tensor): tf.Tensor {
  const t = query.shape[1] as number;
  const s = value ? (value.shape[1] as number) : t;
  const lower = new Uint8Array(t * s);
  for (let i = 0; i < t; i++) for (let j = 0; j <= Math.min(i, s - 1); j++) lower[i * s + j] = 1;
  return tf.tensor(lower, [1, t, s], 'bool');
};

tf.serialization.registerClass(MultiHeadAttention);
