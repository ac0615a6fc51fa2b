import * as tf from '@tensorflow/tfjs-core';
import type * as tfl from '@tensorflow/tfjs-layers/dist/index.js';
import type { ModelGraph } from '../../../engine/model/graph.js';
import type { StageCuts } from '../../../engine/model/stageCuts.js';
import type { OutputLoss } from '../../../engine/model/trainingSpec.js';
import type { Plan } from '../../../engine/plan/plan.js';
import { shardingProblem, shardRole, unshardableLayer } from '../../../engine/plan/tensorSharding.js';
import { callNode } from '../graph/nodeCall.js';
import { layerOfNode, namedWeights } from '../graph/layersModel.js';
import { regularizationTerms } from '../graph/regularization.js';
import { maskShapes } from '../graph/masks.js';
import { ShardedParams } from './shardedParamTable.js';
import { columnDense, embeddingPartial, headsPartial, rowDensePartial, withBias, type PassContext } from './shardedLayers.js';
import type { TensorGroup } from './tensorGroup.js';

/**
 * Where a tensor lives across a stage replica's tensor-parallel shards (SBP, engine/plan/sbp.ts):
 * S0 this shard's rows of the micro-batch, B every row whole on every shard, S1 every row with this
 * shard's slice of the last axis, P partial sums (only between a step and its all-reduce).
 */
export type Layout = 'S0' | 'B' | 'S1' | 'P';

/** A computation on this shard alone, differentiated by tfjs; it reads the stage's variables itself. */
export interface LocalStep {
  kind: 'local';
  name: string;
  inputs: string[];
  output: string;
  params: number[];
  run: (inputs: tf.Tensor[], context: PassContext) => tf.Tensor;
}

/** A change of layout between shards; `rows` is the whole micro-batch's row count. */
export interface CommStep {
  kind: 'comm';
  name: string;
  input: string;
  output: string;
  forward: (x: tf.Tensor, rows: number) => Promise<tf.Tensor>;
  backward: (dy: tf.Tensor, rows: number) => Promise<tf.Tensor>;
}

export type Step = LocalStep | CommStep;

export interface GraphProgram {
  steps: Step[];
  params: ShardedParams;
  /** Tensors without a gradient: data, and what is derived from it by layout changes. */
  constant: Set<string>;
  /** The stage's outgoing tensors: the key holding each, and its layout (S0, or S1 for class-sharded outputs). */
  outgoing: Array<{ id: string; key: string; layout: Layout }>;
}

export interface CompileOptions {
  graph: ModelGraph;
  model: tfl.LayersModel;
  layers: string[];
  cuts: StageCuts;
  stage: number;
  plan: Plan;
  group: TensorGroup;
  losses: OutputLoss[];
}

const owned = (t: tf.Tensor) => Promise.resolve(t);

/** A loss the class-sharded softmax cross-entropy computes (from logits, classes on the last axis). */
export const classShardable = (loss: OutputLoss) => loss.fromLogits && (loss.loss === 'sparseCategoricalCrossentropy' || loss.loss === 'categoricalCrossentropy');

/**
 * Compile a stage of any Keras graph into local computations and layout changes for one shard —
 * Megatron's layout for the layers the plan splits, the rest on the shard's rows of the batch:
 * - the stage's incoming tensors are this shard's rows (S0); an unsplit layer runs on its rows (its
 *   gradients are summed over the group), its inputs brought to S0 first;
 * - a column-parallel Dense, attention's heads and the class-sharded classifier take their inputs
 *   whole (rows gathered) through Megatron's f (identity forward, all-reduce of the input gradient);
 * - a row-parallel Dense takes its input split by features, and its partial sums, like attention's
 *   output projection and the vocabulary-split embedding's lookups, are completed by one all-reduce
 *   before the bias: the result is whole (B), and unsplit layers then take their own rows of it.
 */
export function compileGraphStage(options: CompileOptions): GraphProgram {
  const { graph, model, plan, group, stage, cuts } = options;
  const degree = group.size;
  const byId = new Map(graph.layers.map((l) => [l.id, l]));
  const steps: Step[] = [];
  const params = new ShardedParams(group);
  const constant = new Set<string>();
  const layout = new Map<string, Layout>();
  const isLast = stage === cuts.outgoing.length - 1;
  // A refusal rather than a silent drop: the split layers and the cut's row pieces carry no masks.
  const masked = maskShapes(graph, model);
  const maskedHere = [...cuts.incoming[stage], ...options.layers].find((id) => masked.has(id));
  if (maskedHere) throw new Error(`"${maskedHere}" carries a Keras mask (Embedding mask_zero, Masking), which a tensor-parallel stage does not propagate yet. Run stage ${stage} with tensorParallel 1.`);

  for (const id of cuts.incoming[stage]) {
    layout.set(id, 'S0');
    if (byId.get(id)!.spec.kind === 'input') constant.add(id);
  }
  const comm = (name: string, input: string, output: string, at: Layout, forward: CommStep['forward'], backward: CommStep['backward']) => {
    steps.push({ kind: 'comm', name, input, output, forward, backward });
    layout.set(output, at);
    if (constant.has(input)) constant.add(output);
    return output;
  };
  /** The key of tensor `key` in layout `want`, adding the layout changes once per tensor and layout. */
  const inLayout = (key: string, want: Layout): string => {
    const have = layout.get(key)!;
    if (have === want) return key;
    const target = `${key}@${want}`;
    if (layout.has(target)) return target;
    if (want === 'B') {
      if (have === 'S0') return comm(`gather rows of ${key}`, key, target, 'B', (x, rows) => group.allGatherRows(x, rows), (dy) => owned(group.ownRows(dy)));
      return comm(`gather features of ${key}`, key, target, 'B', (x) => group.allGatherFeatures(x), (dy) => owned(group.ownFeatures(dy)));
    }
    const whole = inLayout(key, 'B');
    if (want === 'S0') return comm(`own rows of ${key}`, whole, target, 'S0', (x) => owned(group.ownRows(x)), (dy, rows) => group.allGatherRows(dy, rows));
    return comm(`own features of ${key}`, whole, target, 'S1', (x) => owned(group.ownFeatures(x)), (dy) => group.allGatherFeatures(dy));
  };
  /** Megatron's f in front of a split layer: identity forward; the shards' input gradients summed backward. */
  const entering = (key: string, consumer: string): string => {
    const whole = inLayout(key, 'B');
    if (constant.has(whole)) return whole;
    return comm(`enter ${consumer}`, whole, `${whole}>${consumer}`, 'B', (x) => owned(x.clone()), (dy) => group.allReduceSum(dy));
  };
  const local = (step: Omit<LocalStep, 'kind'>, at: Layout) => {
    steps.push({ kind: 'local', ...step });
    layout.set(step.output, at);
  };
  /** A partial sum made whole by one all-reduce (its gradient is the whole gradient on every shard). */
  const allReduced = (key: string, output: string) => comm(`all-reduce ${key}`, key, output, 'B', (x) => group.allReduceSum(x), (dy) => owned(dy.clone()));

  for (const id of options.layers) {
    const node = byId.get(id)!;
    if (node.spec.kind === 'input') continue;
    const layer = layerOfNode(model, id);
    // A refusal rather than a silent drop: the penalty's share per shard and replica is not wired here.
    if (regularizationTerms([layer]).length > 0) throw new Error(`Layer "${id}" has a weight regularizer (kernel_regularizer, bias_regularizer, …), which a tensor-parallel stage does not apply yet. Run stage ${stage} with tensorParallel 1, or remove the regularizer.`);
    const weight = plan.sharding[id]?.weight ?? 'B';
    const problem = shardingProblem(node, weight, degree, byId.get(node.inputs[0])?.outputShape ?? []);
    if (problem) throw new Error(`${problem} Keep "${id}" replicated (weight "B") or run stage ${stage} with tensorParallel 1.`);
    const role = shardRole(node, weight);
    const weights = namedWeights(layer, true);
    if (role === null) {
      const refusal = unshardableLayer(node);
      if (refusal) throw new Error(`${refusal} Run stage ${stage} with tensorParallel 1, or replace the layer (LayerNormalization normalises each row alone).`);
      const inputs = node.inputs.map((input) => inLayout(input, 'S0'));
      const indices = weights.map((w) => params.own(w.variable, w.name, w.constraint));
      local({ name: id, inputs, output: id, params: indices, run: (xs, c) => callNode(node, layer, xs, { training: c.training, pass: c.ownPass }) }, 'S0');
      continue;
    }
    if (weights.some((w) => w.constraint)) throw new Error(`Layer "${id}" has a weight constraint, which a split weight cannot apply; keep it replicated (weight "B").`);
    const find = (suffix: string) => weights.find((w) => w.name.endsWith(suffix));
    if (role === 'column') {
      const kernel = find('kernel')!;
      const bias = find('bias');
      const k = params.slice(kernel.variable, kernel.name, 1);
      const b = bias ? params.slice(bias.variable, bias.name, 0) : null;
      const run = columnDense(layer, params.variable(k), b === null ? null : params.variable(b));
      local({ name: `${id} (column-parallel)`, inputs: [entering(node.inputs[0], id)], output: id, params: b === null ? [k] : [k, b], run: (xs) => run(xs[0]) }, 'S1');
      continue;
    }
    const partial = `${id}|partial`;
    let output: string;
    if (role === 'row') {
      const kernel = find('kernel')!;
      const k = params.slice(kernel.variable, kernel.name, 0);
      const run = rowDensePartial(params.variable(k));
      local({ name: `${id} (row-parallel)`, inputs: [inLayout(node.inputs[0], 'S1')], output: partial, params: [k], run: (xs) => run(xs[0]) }, 'P');
      output = find('bias') ? `${id}|sum` : id;
    } else if (role === 'heads') {
      const inputs = [...new Set(node.inputs)].map((input) => entering(input, id));
      const at = node.inputs.map((input) => [...new Set(node.inputs)].indexOf(input));
      const { run, indices } = headsPartial(node, layer, weights, params);
      local({ name: `${id} (heads)`, inputs, output: partial, params: indices, run: (xs, c) => run(at.map((i) => xs[i]), c) }, 'P');
      output = find('attention_output/bias') ? `${id}|sum` : id;
    } else {
      const table = weights[0];
      const k = params.slice(table.variable, table.name, 0);
      const run = embeddingPartial(params.variable(k), group.index);
      local({ name: `${id} (vocabulary-parallel)`, inputs: [inLayout(node.inputs[0], 'B')], output: partial, params: [k], run: (xs) => run(xs[0]) }, 'P');
      output = id;
    }
    allReduced(partial, output);
    if (output !== id) {
      // The bias (and a row-parallel Dense's activation) once, on the summed output: every shard holds it whole.
      const bias = role === 'row' ? find('bias')! : find('attention_output/bias')!;
      const b = params.copy(bias.variable, bias.name);
      const activation = role === 'row' ? (layer as unknown as { activation: { apply(x: tf.Tensor): tf.Tensor } }).activation : null;
      const run = withBias(params.variable(b), activation);
      local({ name: `${id} (bias)`, inputs: [output], output: id, params: [b], run: (xs) => run(xs[0]) }, 'B');
    }
  }

  const lossOf = new Map(options.losses.map((l) => [l.output, l]));
  const outgoing = cuts.outgoing[stage].map((id) => {
    const at = layout.get(id)!;
    if (isLast && at === 'S1') {
      const loss = lossOf.get(id);
      if (!loss || !classShardable(loss)) {
        throw new Error(`Output "${id}" is class-sharded (its kernel split S(1)), which Shoal trains with a sharded softmax cross-entropy from logits only; its loss is ${loss ? `${loss.loss}${loss.fromLogits ? '' : ' on probabilities'}` : 'none'}. Keep "${id}" replicated (weight "B").`);
      }
      if (options.losses.length > 1) throw new Error(`Output "${id}" is class-sharded, which Shoal supports on single-output models only; keep "${id}" replicated (weight "B").`);
      return { id, key: id, layout: at };
    }
    return { id, key: inLayout(id, 'S0'), layout: 'S0' as Layout };
  });
  return { steps, params, constant, outgoing };
}
