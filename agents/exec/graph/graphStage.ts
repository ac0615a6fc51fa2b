import * as tf from '@tensorflow/tfjs-core';
import type * as tfl from '@tensorflow/tfjs-layers/dist/index.js';
import type { LayerNode, ModelGraph } from '../../../engine/model/graph.js';
import type { StageCuts } from '../../../engine/model/stageCuts.js';
import type { OutputLoss } from '../../../engine/model/trainingSpec.js';
import { targetShape } from '../../../engine/data/modelArrays.js';
import { evalSums, tidily, type EvalSums } from '../evalSums.js';
import { lossSum } from '../losses.js';
import type { EvalMeasures, FinalGradient, StageExecutor } from '../stageExecutor.js';
import type { ShardedParamSpec } from '../tensorParallel/shardedParams.js';
import { GradientAccumulator } from '../gradientAccumulator.js';
import { BatchNormStatistics } from './batchNormStatistics.js';
import type { PassRows } from './dropoutMask.js';
import { layerOfNode, namedWeights, type WeightConstraint } from './layersModel.js';
import { callNode, type CallMode } from './nodeCall.js';
import { nodeBackward } from './nodeBackward.js';
import { packColumns, unpackColumns } from './packing.js';
import { regularizationSum, regularizationTerms, type RegularizationTerm } from './regularization.js';
import { callMask, maskKey, maskShapes, outputMask } from './masks.js';

export interface GraphStageOptions {
  graph: ModelGraph;
  model: tfl.LayersModel;
  /** The stage's layer ids, a contiguous run of the graph's order. */
  layers: string[];
  cuts: StageCuts;
  stage: number;
  /** The loss of each model output (used on the last stage only). */
  losses: OutputLoss[];
  seed: number;
  /** Keep every layer call's output from the forward pass for the backward pass (the plan's `recompute: false`). */
  keepActivations?: boolean;
}

/** One layer call of the stage, with the indices (into params) of the weights it trains. */
interface StageNode {
  node: LayerNode;
  layer: tfl.layers.Layer;
  params: number[];
}

/** A tensor of a pipeline cut: a value (by layer id) or a value's Keras mask (masks.ts), and its shape without the batch. */
interface CutColumn {
  key: string;
  shape: number[];
  mask: boolean;
}

/** What a training forward pass keeps for its backward pass: every tensor of the stage, by id. */
interface Kept {
  env: Map<string, tf.Tensor>;
  pass: PassRows | null;
}

const yieldToEventLoop = () => new Promise<void>((resolve) => setImmediate(resolve));

/**
 * One pipeline stage of any Keras graph — a user's model or a built-in one — executed with
 * tfjs-layers' layers. The stage receives the packed tensors of its incoming cut, applies its layer
 * calls in graph order, and sends the packed tensors of its outgoing cut; the last stage computes each
 * output's loss, weighted and summed.
 *
 * Two ways backward, both exact:
 * - one tape: the stage's calls (and the loss, on the last stage) run again under `tf.grads` when the
 *   backward pass comes, keeping only the stage input (recompute). The last stage runs forward, loss
 *   and backward as one taped call and recomputes nothing. Fastest where nothing needs the gradients
 *   layer by layer.
 * - layer by layer: the forward pass keeps every call's output; the backward pass walks the calls in
 *   reverse (nodeBackward.ts: Dense differentiated by hand, others re-run one layer under a tape), and
 *   after each call hands over the gradients that call finished and lets the event loop run, so that
 *   their all-reduce travels while earlier layers compute. Used when activations are kept and for
 *   every backward pass that hands gradients over.
 * Dropout masks are deterministic (nodeCall.ts), so repeated calls are exact; batch-norm statistics
 * are recorded once, in the first pass.
 */
export class GraphStage implements StageExecutor {
  readonly params: tf.Variable[];
  readonly paramSpecs: ShardedParamSpec[];
  readonly inputShape: number[];
  readonly outputShape: number[];
  readonly batchNorm = new BatchNormStatistics();
  private readonly nodes: StageNode[];
  private readonly incoming: string[];
  private readonly outgoing: string[];
  /** What the packed rows of each cut hold: the values, then the masks they carry (masks.ts). */
  private readonly incomingColumns: CutColumn[];
  private readonly outgoingColumns: CutColumn[];
  /** Tensors of the model that carry a Keras mask, with the mask's shape. */
  private readonly masked: Map<string, number[]>;
  private readonly shapes: Map<string, number[]>;
  private readonly isFirst: boolean;
  /** Positions in the incoming cut of tensors computed by earlier stages: the ones a gradient goes back to. */
  private readonly computed: number[];
  /** Tensors of the stage that need a gradient: they lead back to a weight or to a computed input. */
  private readonly needsGradient = new Set<string>();
  private readonly isLast: boolean;
  private readonly keepActivations: boolean;
  private readonly gradients: GradientAccumulator;
  /** Rows (samples) of the next pass, for the dropout masks. */
  private pass: PassRows | null = null;
  private readonly passes = new Map<tf.Tensor, PassRows | null>();
  private readonly kept = new Map<tf.Tensor, Kept>();
  private readonly constraints: Array<{ variable: tf.Variable; constraint: WeightConstraint }> = [];
  /** The weight-regularization penalties of the stage's own layers (regularization.ts). */
  private readonly regularizers: RegularizationTerm[];

  constructor(private readonly options: GraphStageOptions) {
    const { graph, model, layers, cuts, stage } = options;
    const byId = new Map(graph.layers.map((l) => [l.id, l]));
    this.shapes = new Map(graph.layers.map((l) => [l.id, l.outputShape]));
    this.incoming = cuts.incoming[stage];
    this.outgoing = cuts.outgoing[stage];
    this.isFirst = stage === 0;
    // Data (input layers) crossing the cut has no gradient: differentiating through an Embedding's
    // integer ids is not even defined. Only tensors earlier stages computed get one.
    this.computed = this.incoming.flatMap((id, i) => (byId.get(id)!.spec.kind === 'input' ? [] : [i]));
    this.isLast = stage === cuts.outgoing.length - 1;
    this.keepActivations = options.keepActivations ?? false;
    this.masked = maskShapes(graph, model);
    const columns = (ids: string[], withMasks: boolean): CutColumn[] => [
      ...ids.map((id) => ({ key: id, shape: this.shapes.get(id)!, mask: false })),
      ...(withMasks ? ids.filter((id) => this.masked.has(id)).map((id) => ({ key: maskKey(id), shape: this.masked.get(id)!, mask: true })) : []),
    ];
    // The model's outputs leave the last stage without their masks: the loss, as tfjs's, takes none.
    this.incomingColumns = columns(this.incoming, true);
    this.outgoingColumns = columns(this.outgoing, !this.isLast);
    const width = (cut: CutColumn[]) => cut.reduce((n, c) => n + c.shape.reduce((a, b) => a * b, 1), 0);
    this.inputShape = [width(this.incomingColumns)];
    this.outputShape = [width(this.outgoingColumns)];
    // A shared layer's weights appear once, however often the stage calls it: its gradients add up.
    const index = new Map<tf.Variable, number>();
    this.params = [];
    this.paramSpecs = [];
    this.gradients = new GradientAccumulator(this.params);
    this.computed.forEach((i) => this.needsGradient.add(this.incoming[i]));
    this.nodes = layers.map((id) => byId.get(id)!).filter((n) => n.spec.kind !== 'input').map((node) => {
      const layer = layerOfNode(model, node.id);
      if (layer.getClassName() === 'BatchNormalization') this.batchNorm.track(layer);
      const params = namedWeights(layer, true).map(({ name, variable, constraint }) => {
        if (!index.has(variable)) {
          index.set(variable, this.params.length);
          if (constraint) this.constraints.push({ variable, constraint });
          this.params.push(variable);
          this.paramSpecs.push({ name, shape: variable.shape, init: new Float32Array(0), sum: 'replicated' });
        }
        return index.get(variable)!;
      });
      if (params.length > 0 || node.inputs.some((id) => this.needsGradient.has(id))) this.needsGradient.add(node.id);
      return { node, layer, params };
    });
    this.regularizers = regularizationTerms(this.nodes.map((n) => n.layer));
  }

  /** The whole model as tfjs-layers built it (this stage's layers are some of its layers). */
  get model(): tfl.LayersModel {
    return this.options.model;
  }

  /**
   * Project every constrained weight after an update, as Keras does after each optimizer step (tfjs's
   * own fit does not: Shoal follows Keras). Every replica holds the whole updated weight by then, so
   * the projection is the same everywhere, whatever the plan.
   */
  applyConstraints(): void {
    for (const { variable, constraint } of this.constraints) tf.tidy(() => variable.assign(constraint.apply(variable)));
  }

  /**
   * Add `share` of the stage's weight-regularization penalty to the loss: its gradient goes to the
   * accumulated gradients, its value is returned for the reported loss. The penalty belongs to the
   * global step, not to a micro-batch, so the schedules give each pass the fraction of the step's rows
   * it computes: the shares of all replicas and micro-batches add up to one penalty per update.
   */
  regularize(share: number): number {
    if (this.regularizers.length === 0 || share === 0) return 0;
    const { value, grads } = tf.tidy(() => {
      const penalty = () => tf.mul(regularizationSum(this.regularizers), share) as tf.Scalar;
      // A frozen layer's penalty counts in the loss (as in tfjs) but has nothing to differentiate.
      if (this.params.length === 0) return { value: penalty(), grads: [] };
      const result = tf.engine().gradients(penalty, this.params, undefined, true);
      return { value: result.value, grads: result.grads };
    });
    grads.forEach((g, k) => (g ? this.gradients.add(k, g) : undefined));
    const penalty = value.dataSync()[0];
    value.dispose();
    return penalty;
  }

  /** Weights without gradients this stage holds (batch-norm statistics, frozen layers), by manifest name. */
  stateWeights(): Array<{ name: string; variable: tf.Variable }> {
    const seen = new Set<tf.Variable>();
    return this.nodes.flatMap(({ layer }) => namedWeights(layer, false)).filter(({ variable }) => !seen.has(variable) && seen.add(variable));
  }

  /** The rows the next forward (and its backward) pass computes, for deterministic dropout. */
  setPass(pass: PassRows | null): void {
    this.pass = pass;
  }

  /** The incoming cut's tensors, in incomingColumns' order (masks back to booleans). */
  private unpack(x: tf.Tensor): tf.Tensor[] {
    const parts = unpackColumns(x, this.incomingColumns.map((c) => c.shape));
    return parts.map((t, i) => {
      if (!this.incomingColumns[i].mask) return t;
      const mask = tf.cast(t, 'bool');
      t.dispose();
      return mask;
    });
  }

  private environment(parts: tf.Tensor[]): Map<string, tf.Tensor> {
    return new Map(parts.map((t, i) => [this.incomingColumns[i].key, t]));
  }

  /** One layer call on the stage's tensors so far: its output, and its Keras mask where it carries one. Ops only. */
  private call(node: LayerNode, layer: tfl.layers.Layer, env: Map<string, tf.Tensor>, mode: CallMode): { y: tf.Tensor; mask: tf.Tensor | null; read: tf.Tensor[] } {
    const inputs = this.inputsOf(node, env);
    const masks = this.masksOf(node, env);
    const y = callNode(node, layer, inputs, mode, callMask(masks));
    const mask = this.masked.has(node.id) ? outputMask(layer, inputs, masks) : null;
    return { y, mask, read: [...inputs, ...masks.filter((m): m is tf.Tensor => m !== null)] };
  }

  /** Every layer call of the stage on the incoming tensors; returns all tensors by key (ops only: the caller tidies). */
  private run(parts: tf.Tensor[], mode: CallMode): Map<string, tf.Tensor> {
    const env = this.environment(parts);
    for (const { node, layer } of this.nodes) {
      const { y, mask } = this.call(node, layer, env, mode);
      env.set(node.id, y);
      if (mask) env.set(maskKey(node.id), mask);
    }
    return env;
  }

  private masksOf(node: LayerNode, env: Map<string, tf.Tensor>): Array<tf.Tensor | null> {
    return node.inputs.map((id) => env.get(maskKey(id)) ?? null);
  }

  private inputsOf(node: LayerNode, env: Map<string, tf.Tensor>): tf.Tensor[] {
    return node.inputs.map((id) => {
      const t = env.get(id);
      if (!t) throw new Error(`Layer "${node.id}" reads "${id}", which stage ${this.options.stage + 1} neither computes nor receives.`);
      return t;
    });
  }

  /** A training forward pass whose tensors stay (kept by the caller): each call tidied on its own. */
  private runKept(x: tf.Tensor, pass: PassRows | null, record: boolean): Map<string, tf.Tensor> {
    const env = this.environment(this.unpack(x));
    const mode: CallMode = { training: true, pass, batchNorm: record ? this.batchNorm : undefined };
    for (const { node, layer } of this.nodes) {
      // A pass-through call (dropout at inference, rate 0; a mask carried over) returns its input:
      // keep one tensor per key.
      const out = tf.tidy(() => {
        const { y, mask, read } = this.call(node, layer, env, mode);
        const own = (t: tf.Tensor) => (read.includes(t) ? t.clone() : t);
        return mask ? [own(y), own(mask)] : [own(y)];
      });
      env.set(node.id, out[0]);
      if (out[1]) env.set(maskKey(node.id), out[1]);
    }
    return env;
  }

  private outputs(env: Map<string, tf.Tensor>, ids: string[]): tf.Tensor[] {
    return ids.map((id) => env.get(id)!);
  }

  async forward(x: tf.Tensor): Promise<tf.Tensor> {
    this.batchNorm.countSlice();
    if (this.keepActivations) {
      const env = this.runKept(x, this.pass, true);
      this.kept.set(x, { env, pass: this.pass });
      return tf.tidy(() => packColumns(this.outputs(env, this.outgoingKeys)));
    }
    this.passes.set(x, this.pass);
    return tf.tidy(() => packColumns(this.outputs(this.run(this.unpack(x), { training: true, pass: this.pass, batchNorm: this.batchNorm }), this.outgoingKeys)));
  }

  private get outgoingKeys(): string[] {
    return this.outgoingColumns.map((c) => c.key);
  }

  async infer(x: tf.Tensor): Promise<tf.Tensor> {
    return tf.tidy(() => packColumns(this.outputs(this.run(this.unpack(x), { training: false, pass: null }), this.outgoingKeys)));
  }

  /**
   * Backward from the gradient of the stage output. `weights`, when given, are the weights to
   * differentiate at instead of the current ones (PipeMare's discrepancy correction): the stage's
   * calls then run again at those weights.
   */
  async backward(x: tf.Tensor, dy: tf.Tensor, _rows: number, onFinal?: FinalGradient, weights?: tf.Tensor[]): Promise<tf.Tensor | null> {
    // Masks have no gradient: only the values' columns of dy go back through the stage.
    if (this.outgoingColumns.length === this.outgoing.length) return this.backwardValues(x, dy, onFinal, weights);
    const values = tf.slice(dy, [0, 0], [dy.shape[0], this.outputShape[0] - this.outgoingColumns.filter((c) => c.mask).reduce((n, c) => n + c.shape.reduce((a, b) => a * b, 1), 0)]);
    try {
      return await this.backwardValues(x, values, onFinal, weights);
    } finally {
      values.dispose();
    }
  }

  /** Backward from the gradient of the outgoing values (without mask columns). */
  private async backwardValues(x: tf.Tensor, dy: tf.Tensor, onFinal?: FinalGradient, weights?: tf.Tensor[]): Promise<tf.Tensor | null> {
    const kept = this.kept.get(x);
    this.kept.delete(x);
    const pass = kept?.pass ?? this.passes.get(x) ?? null;
    this.passes.delete(x);
    if (weights) {
      kept?.env.forEach((t) => t.dispose());
      return this.atWeights(weights, () => this.backwardLayerByLayer(this.runKept(x, pass, false), dy, pass, onFinal));
    }
    if (kept || onFinal) return this.backwardLayerByLayer(kept?.env ?? this.runKept(x, pass, false), dy, pass, onFinal);
    const parts = this.unpack(x);
    try {
      const grads = tf.tidy(() => {
        const f = () => packColumns(this.outputs(this.run(parts, { training: true, pass }), this.outgoing));
        return this.gradientsOf(f, parts, dy).grads;
      });
      return this.finishOneTape(grads, parts);
    } finally {
      parts.forEach((t) => t.dispose());
    }
  }

  /** Run `f` with the parameters set to `weights`, then put the current values back. */
  private async atWeights<T>(weights: tf.Tensor[], f: () => Promise<T>): Promise<T> {
    const current = this.params.map((p) => p.clone());
    this.params.forEach((p, k) => p.assign(weights[k]));
    try {
      return await f();
    } finally {
      this.params.forEach((p, k) => p.assign(current[k]));
      current.forEach((t) => t.dispose());
    }
  }

  /**
   * f's value and its gradients with respect to the computed incoming tensors, then the parameters. A
   * stage with neither (data passed through layers without weights) has nothing to differentiate.
   */
  private gradientsOf(f: () => tf.Tensor, parts: tf.Tensor[], dy?: tf.Tensor): { value: tf.Tensor; grads: tf.Tensor[] } {
    const xs = [...this.computed.map((i) => parts[i]), ...this.params];
    if (xs.length === 0) return { value: f(), grads: [] };
    return tf.engine().gradients(f, xs, dy, true);
  }

  async lossBackward(x: tf.Tensor, targets: Float32Array, rows: number, divisor: number, onFinal?: FinalGradient): Promise<{ loss: number; dx: tf.Tensor | null }> {
    const pass = this.pass;
    this.batchNorm.countSlice();
    if (onFinal) return this.lossBackwardLayerByLayer(x, targets, rows, divisor, pass, onFinal);
    const parts = this.unpack(x);
    try {
      const { value, grads } = tf.tidy(() => {
        const targetTensors = this.targetTensors(targets, rows);
        const mode: CallMode = { training: true, pass, batchNorm: this.batchNorm };
        const f = () => this.totalLoss(this.outputs(this.run(parts, mode), this.outgoing), targetTensors, divisor);
        const result = this.gradientsOf(f, parts);
        return { value: tf.keep(result.value), grads: result.grads };
      });
      const loss = (await value.data())[0];
      value.dispose();
      return { loss, dx: this.finishOneTape(grads, parts) };
    } finally {
      parts.forEach((t) => t.dispose());
    }
  }

  /** The last stage's pass, layer by layer: forward kept, the loss's gradient of each output, then backward. */
  private async lossBackwardLayerByLayer(x: tf.Tensor, targets: Float32Array, rows: number, divisor: number, pass: PassRows | null, onFinal: FinalGradient) {
    const env = this.runKept(x, pass, true);
    const { value, grads } = tf.tidy(() => {
      const targetTensors = this.targetTensors(targets, rows);
      const outputs = this.outputs(env, this.outgoing);
      const result = tf.engine().gradients(() => this.totalLoss(outputs, targetTensors, divisor), outputs, undefined, true);
      return { value: tf.keep(result.value), grads: result.grads };
    });
    const dy = tf.tidy(() => packColumns(this.outgoing.map((id, i) => grads[i] ?? tf.zerosLike(env.get(id)!))));
    tf.dispose(grads);
    const loss = (await value.data())[0];
    value.dispose();
    try {
      return { loss, dx: await this.backwardLayerByLayer(env, dy, pass, onFinal) };
    } finally {
      dy.dispose();
    }
  }

  /**
   * Walk the stage's calls in reverse from the gradient of the outgoing cut, with every tensor the
   * forward pass kept (disposed here). A parameter's gradient is final once the last call that uses
   * it (a shared layer's first call) is done: then it is handed over, and the event loop runs.
   */
  private async backwardLayerByLayer(env: Map<string, tf.Tensor>, dy: tf.Tensor, pass: PassRows | null, onFinal?: FinalGradient): Promise<tf.Tensor | null> {
    const grads = new Map<string, tf.Tensor>();
    const addGrad = (id: string, g: tf.Tensor) => {
      const previous = grads.get(id);
      grads.set(id, previous ? tf.tidy(() => tf.add(previous, g)) : g);
      if (previous) {
        previous.dispose();
        g.dispose();
      }
    };
    const uses = new Map<number, number>();
    for (const { params } of this.nodes) for (const k of params) uses.set(k, (uses.get(k) ?? 0) + 1);
    try {
      const parts = unpackColumns(dy, this.outgoing.map((id) => this.shapes.get(id)!));
      this.outgoing.forEach((id, i) => addGrad(id, parts[i]));
      const mode: CallMode = { training: true, pass };
      for (let n = this.nodes.length - 1; n >= 0; n--) {
        const { node, layer, params } = this.nodes[n];
        const g = grads.get(node.id);
        grads.delete(node.id);
        if (g && this.needsGradient.has(node.id)) {
          const inputs = this.inputsOf(node, env);
          const wanted = node.inputs.map((id) => this.needsGradient.has(id));
          const result = tf.tidy(() => {
            const r = nodeBackward(node, layer, inputs, env.get(node.id)!, g, params.map((k) => this.params[k]), wanted, mode, callMask(this.masksOf(node, env)));
            return [...r.inputs.map((t, i) => t ?? (wanted[i] ? tf.zerosLike(inputs[i]) : tf.scalar(0))), ...r.params.map((t, j) => t ?? tf.zerosLike(this.params[params[j]]))];
          });
          node.inputs.forEach((id, i) => (wanted[i] ? addGrad(id, result[i]) : result[i].dispose()));
          params.forEach((k, j) => this.gradients.add(k, result[node.inputs.length + j]));
        }
        g?.dispose();
        if (onFinal) {
          const done = params.filter((k) => uses.set(k, uses.get(k)! - 1).get(k) === 0);
          for (const k of done) onFinal(k, this.gradients.take(k));
          if (done.length > 0) await yieldToEventLoop();
        }
      }
      if (this.isFirst) return null;
      return tf.tidy(() => packColumns(this.incomingColumns.map(({ key }) => grads.get(key) ?? tf.zerosLike(env.get(key)!))));
    } finally {
      grads.forEach((t) => t.dispose());
      env.forEach((t) => t.dispose());
    }
  }

  /** Weighted sum of every output's loss (each summed over rows and divided by the global batch). */
  private totalLoss(outputs: tf.Tensor[], targets: tf.Tensor[], divisor: number): tf.Scalar {
    // lossSum applies each output's loss weight.
    const terms = this.options.losses.map((loss, i) => lossSum(loss, outputs[i], targets[i], divisor));
    return (terms.length === 1 ? terms[0] : tf.addN(terms)) as tf.Scalar;
  }

  /** The packed targets of the outputs, as tensors shaped like each loss expects. */
  private targetTensors(targets: Float32Array, rows: number): tf.Tensor[] {
    const shapes = this.options.losses.map((loss) => targetShape(loss, this.shapes.get(loss.output)!));
    return unpackColumns(tf.tensor(targets, [rows, targets.length / Math.max(rows, 1)]), shapes);
  }

  /** Accumulate the one tape's parameter gradients; return dx. */
  private finishOneTape(grads: Array<tf.Tensor | null>, parts: tf.Tensor[]): tf.Tensor | null {
    const offset = this.computed.length;
    this.params.forEach((p, k) => this.gradients.add(k, grads[k + offset] ?? tf.zerosLike(p)));
    const inputGrads = grads.slice(0, offset);
    if (this.isFirst) {
      inputGrads.forEach((g) => g?.dispose());
      return null;
    }
    // The gradient of the incoming cut, packed like it; zeros for data and for what no path reaches.
    const dx = tf.tidy(() => packColumns(parts.map((p, i) => inputGrads[this.computed.indexOf(i)] ?? tf.zerosLike(p))));
    inputGrads.forEach((g) => g?.dispose());
    return dx;
  }

  async evaluate(x: tf.Tensor, targets: Float32Array, rows: number, measure?: EvalMeasures): Promise<EvalSums> {
    return tidily(() => {
      const outputs = this.outputs(this.run(this.unpack(x), { training: false, pass: null }), this.outgoing);
      return evalSums(this.options.losses, measure?.metrics ?? [], outputs, this.targetTensors(targets, rows));
    });
  }

  takeGradients(): tf.Tensor[] {
    return this.gradients.takeAll();
  }

  keptTensors(): tf.Tensor[] {
    return [...this.kept.values()].flatMap(({ env }) => [...env.values()]);
  }

  dispose(): void {
    this.gradients.dispose();
    this.kept.forEach(({ env }) => env.forEach((t) => t.dispose()));
    this.kept.clear();
  }
}
