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
import { dropoutMask, type PassRows } from './dropoutMask.js';
import { layerOfNode, namedWeights, type WeightConstraint } from './layersModel.js';
import { packColumns, unpackColumns } from './packing.js';

/** Layer classes whose randomness Shoal draws itself (dropoutMask), by the axes one draw covers. */
const DROPOUT_BROADCAST: Record<string, (rank: number) => number[]> = {
  Dropout: () => [],
  SpatialDropout1D: () => [1],
  SpatialDropout2D: () => [1, 2],
};

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
}

/**
 * One pipeline stage of any Keras graph, executed with tfjs-layers' layers. The stage receives the
 * packed tensors of its incoming cut, applies its layer calls in graph order, and sends the packed
 * tensors of its outgoing cut; the last stage computes each output's loss, weighted and summed.
 *
 * Backward: tfjs records its autodiff tape only within one call, so a stage that is not last repeats
 * its forward pass inside `tf.grads` when the backward pass comes (what the plan's `recompute` does
 * for the built-in layers: the stage keeps only its input). The last stage runs forward, losses and
 * backward as one taped call and recomputes nothing. Dropout masks are deterministic (dropoutMask.ts),
 * so the repeat is exact; batch-norm statistics are recorded once, in the first pass.
 */
export class GraphStage implements StageExecutor {
  readonly params: tf.Variable[];
  readonly paramSpecs: ShardedParamSpec[];
  readonly inputShape: number[];
  readonly outputShape: number[];
  readonly batchNorm = new BatchNormStatistics();
  private readonly nodes: Array<{ node: LayerNode; layer: tfl.layers.Layer }>;
  private readonly incoming: string[];
  private readonly outgoing: string[];
  private readonly shapes: Map<string, number[]>;
  private readonly isFirst: boolean;
  /** Positions in the incoming cut of tensors computed by earlier stages: the ones a gradient goes back to. */
  private readonly computed: number[];
  private readonly isLast: boolean;
  private readonly gradients: GradientAccumulator;
  /** Rows (samples) of the next pass, for the dropout masks. */
  private pass: PassRows | null = null;
  private readonly passes = new Map<tf.Tensor, PassRows | null>();
  private readonly constraints: Array<{ variable: tf.Variable; constraint: WeightConstraint }> = [];

  constructor(private readonly options: GraphStageOptions) {
    const { graph, model, layers, cuts, stage } = options;
    const byId = new Map(graph.layers.map((l) => [l.id, l]));
    this.shapes = new Map(graph.layers.map((l) => [l.id, l.outputShape]));
    this.nodes = layers.map((id) => byId.get(id)!).filter((n) => n.spec.kind !== 'input').map((node) => ({ node, layer: layerOfNode(model, node.id) }));
    this.incoming = cuts.incoming[stage];
    this.outgoing = cuts.outgoing[stage];
    this.isFirst = stage === 0;
    // Data (input layers) crossing the cut has no gradient: differentiating through an Embedding's
    // integer ids is not even defined. Only tensors earlier stages computed get one.
    this.computed = this.incoming.flatMap((id, i) => (byId.get(id)!.spec.kind === 'input' ? [] : [i]));
    this.isLast = stage === cuts.outgoing.length - 1;
    const width = (ids: string[]) => ids.reduce((n, id) => n + this.shapes.get(id)!.reduce((a, b) => a * b, 1), 0);
    this.inputShape = [width(this.incoming)];
    this.outputShape = [width(this.outgoing)];
    // A shared layer's weights appear once, however often the stage calls it: its gradients add up.
    const seen = new Set<tf.Variable>();
    this.params = [];
    this.paramSpecs = [];
    this.gradients = new GradientAccumulator(this.params);
    for (const { layer } of this.nodes) {
      if (layer.getClassName() === 'BatchNormalization') this.batchNorm.track(layer);
      for (const { name, variable, constraint } of namedWeights(layer, true)) {
        if (seen.has(variable)) continue;
        seen.add(variable);
        if (constraint) this.constraints.push({ variable, constraint });
        this.params.push(variable);
        this.paramSpecs.push({ name, shape: variable.shape, init: new Float32Array(0), sum: 'replicated' });
      }
    }
  }

  /**
   * Project every constrained weight after an update, as Keras does after each optimizer step (tfjs's
   * own fit does not: Shoal follows Keras). Every replica holds the whole updated weight by then, so
   * the projection is the same everywhere, whatever the plan.
   */
  applyConstraints(): void {
    for (const { variable, constraint } of this.constraints) tf.tidy(() => variable.assign(constraint.apply(variable)));
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

  /** Every layer call of the stage on the unpacked incoming tensors; returns all tensors by id. */
  private unpack(x: tf.Tensor): tf.Tensor[] {
    return unpackColumns(x, this.incoming.map((id) => this.shapes.get(id)!));
  }

  private run(parts: tf.Tensor[], training: boolean, record: boolean, pass: PassRows | null): Map<string, tf.Tensor> {
    const env = new Map<string, tf.Tensor>();
    parts.forEach((t, i) => env.set(this.incoming[i], t));
    for (const { node, layer } of this.nodes) {
      const inputs = node.inputs.map((id) => {
        const t = env.get(id);
        if (!t) throw new Error(`Layer "${node.id}" reads "${id}", which stage ${this.options.stage + 1} neither computes nor receives.`);
        return t;
      });
      env.set(node.id, this.call(node, layer, inputs, training, record, pass));
    }
    return env;
  }

  private call(node: LayerNode, layer: tfl.layers.Layer, inputs: tf.Tensor[], training: boolean, record: boolean, pass: PassRows | null): tf.Tensor {
    const className = layer.getClassName();
    const dropout = DROPOUT_BROADCAST[className];
    if (dropout) {
      const rate = (layer as unknown as { rate: number }).rate;
      if (!training || rate <= 0) return inputs[0];
      if (!pass) throw new Error(`Layer "${node.id}" (dropout) ran in training without the rows of its micro-batch.`);
      return tf.mul(inputs[0], dropoutMask(inputs[0].shape, rate, node.id, pass, dropout(inputs[0].rank)));
    }
    if (training && record && this.batchNorm.isTracked(layer)) this.batchNorm.record(layer, inputs[0]);
    if (node.spec.kind === 'multiHeadAttention') {
      // The layer is multiHeadAttention.ts's (registered in place of tfjs's). Causal when the spec or
      // the saved call (`use_causal_mask` of the layer's k-th node, for graph id `<layer>@k`) says so.
      const [query, value, key] = inputs;
      const call = Number(/@(\d+)$/.exec(node.id)?.[1] ?? 0);
      const useCausalMask = node.spec.causal || layer.inboundNodes[call]?.callArgs?.useCausalMask === true;
      // Attention dropout: Shoal's deterministic mask over the scores [rows, heads, T, S].
      const rate = (layer as unknown as { dropout?: number }).dropout ?? 0;
      let attentionDropoutMask: ((shape: number[]) => tf.Tensor) | undefined;
      if (training && rate > 0) {
        if (!pass) throw new Error(`Layer "${node.id}" (attention dropout) ran in training without the rows of its micro-batch.`);
        attentionDropoutMask = (shape) => dropoutMask(shape, rate, node.id, pass);
      }
      return layer.apply(query, { value, key, useCausalMask, training, attentionDropoutMask }) as tf.Tensor;
    }
    const out = layer.apply(inputs.length === 1 ? inputs[0] : inputs, { training });
    return (Array.isArray(out) ? out[0] : out) as tf.Tensor;
  }

  private outputs(env: Map<string, tf.Tensor>, ids: string[]): tf.Tensor[] {
    return ids.map((id) => env.get(id)!);
  }

  async forward(x: tf.Tensor): Promise<tf.Tensor> {
    this.passes.set(x, this.pass);
    this.batchNorm.countSlice();
    return tf.tidy(() => packColumns(this.outputs(this.run(this.unpack(x), true, true, this.pass), this.outgoing)));
  }

  async infer(x: tf.Tensor): Promise<tf.Tensor> {
    return tf.tidy(() => packColumns(this.outputs(this.run(this.unpack(x), false, false, null), this.outgoing)));
  }

  async backward(x: tf.Tensor, dy: tf.Tensor, _rows: number, onFinal?: FinalGradient): Promise<tf.Tensor | null> {
    const pass = this.passes.get(x) ?? null;
    this.passes.delete(x);
    const parts = this.unpack(x);
    try {
      const grads = tf.tidy(() => {
        const f = () => packColumns(this.outputs(this.run(parts, true, false, pass), this.outgoing));
        return this.gradientsOf(f, parts, dy).grads;
      });
      return this.finishBackward(grads, parts, onFinal);
    } finally {
      parts.forEach((t) => t.dispose());
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
    const parts = this.unpack(x);
    try {
      const { value, grads } = tf.tidy(() => {
        const targetTensors = this.targetTensors(targets, rows);
        const f = () => this.totalLoss(this.outputs(this.run(parts, true, true, pass), this.outgoing), targetTensors, divisor);
        const result = this.gradientsOf(f, parts);
        return { value: tf.keep(result.value), grads: result.grads };
      });
      const loss = (await value.data())[0];
      value.dispose();
      return { loss, dx: this.finishBackward(grads, parts, onFinal) };
    } finally {
      parts.forEach((t) => t.dispose());
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

  /** Accumulate parameter gradients, hand them over when the step's last pass asks; return dx. */
  private finishBackward(grads: Array<tf.Tensor | null>, parts: tf.Tensor[], onFinal?: FinalGradient): tf.Tensor | null {
    const offset = this.computed.length;
    this.params.forEach((p, k) => this.gradients.add(k, grads[k + offset] ?? tf.zerosLike(p)));
    if (onFinal) this.params.forEach((_, k) => onFinal(k, this.takeGradient(k)));
    const inputGrads = grads.slice(0, offset);
    if (this.isFirst) return null;
    // The gradient of the incoming cut, packed like it; zeros for data and for what no path reaches.
    const dx = tf.tidy(() => packColumns(parts.map((p, i) => inputGrads[this.computed.indexOf(i)] ?? tf.zerosLike(p))));
    inputGrads.forEach((g) => g?.dispose());
    return dx;
  }

  async evaluate(x: tf.Tensor, targets: Float32Array, rows: number, measure?: EvalMeasures): Promise<EvalSums> {
    return tidily(() => {
      const outputs = this.outputs(this.run(this.unpack(x), false, false, null), this.outgoing);
      return evalSums(this.options.losses, measure?.metrics ?? [], outputs, this.targetTensors(targets, rows));
    });
  }

  takeGradient(k: number): tf.Tensor {
    return this.gradients.take(k);
  }

  takeGradients(): tf.Tensor[] {
    return this.gradients.takeAll();
  }

  keptTensors(): tf.Tensor[] {
    return [];
  }

  dispose(): void {
    this.gradients.dispose();
  }
}


