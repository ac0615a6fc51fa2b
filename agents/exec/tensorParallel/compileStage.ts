import * as tf from '@tensorflow/tfjs-core';
import type { LayerNode } from '../../../engine/model/graph.js';
import type { Plan } from '../../../engine/plan/plan.js';
import { splitAxis } from '../../../engine/plan/sbp.js';
import { applyLayer, layerParams } from '../layerOps.js';
import { shardParam, type ShardedParamSpec } from './shardedParams.js';
import type { TensorGroup } from './tensorGroup.js';

/**
 * Where a tensor lives across a stage replica's tensor-parallel shards (SBP, engine/plan/sbp.ts):
 * S0 rows of the batch split, S1 last axis split, B whole on every shard, P partial sums.
 */
export type Layout = 'S0' | 'S1' | 'B' | 'P';

/** A computation on this shard alone, differentiated by tfjs; `params` index the stage's parameters. */
export interface LocalOp {
  kind: 'local';
  name: string;
  params: number[];
  run: (x: tf.Tensor, params: tf.Tensor[]) => tf.Tensor;
}

/**
 * A change of layout between shards: a collective in one direction or both. `rows` is the number of
 * rows of the whole micro-batch (shards may hold one row more or less than others).
 */
export interface CommOp {
  kind: 'comm';
  name: string;
  forward: (x: tf.Tensor, rows: number) => Promise<tf.Tensor>;
  backward: (dy: tf.Tensor, rows: number) => Promise<tf.Tensor>;
}

export type StageOp = LocalOp | CommOp;

export interface CompiledStage {
  ops: StageOp[];
  params: ShardedParamSpec[];
  /** Layout of the stage's output: S0 towards a next stage; the logits' layout on the last stage. */
  output: Layout;
}

const comm = (name: string, forward: CommOp['forward'], backward: CommOp['backward']): CommOp => ({ kind: 'comm', name, forward, backward });
const owned = (t: tf.Tensor) => Promise.resolve(t);

/**
 * Compile a stage's layers into local computations and layout changes for one shard, following the
 * same propagation the cost model prices (engine/cost/stageFacts.ts) — Megatron's pattern for Dense
 * layers and Whale's class-dimension sharding for the classifier:
 * - the stage input arrives split by rows (S0); unsharded layers run on their rows (data parallel
 *   inside the group) and their gradients are summed over the group;
 * - a column-parallel Dense (kernel S(1)) needs its input whole (gathered) and yields S1; its input
 *   gradient is a partial sum, all-reduced in the backward pass;
 * - a row-parallel Dense (kernel S(0)) multiplies its slice of the input features, all-reduces the
 *   partial sums, then adds the bias and activation once; its backward needs no collective;
 * - the stage output goes back to S0 for the next stage; a class-sharded classifier keeps S1 logits
 *   for the sharded softmax cross-entropy.
 */
export function compileStage(plan: Plan, layers: LayerNode[], inputShape: number[], group: TensorGroup, isLast: boolean): CompiledStage {
  const ops: StageOp[] = [];
  const params: ShardedParamSpec[] = [];
  let layout: Layout = 'S0';
  let shape = inputShape;

  const toWhole = (from: Layout): Layout => {
    if (from === 'S0') ops.push(comm('gather rows', (x, rows) => group.allGatherRows(x, rows), (dy) => owned(group.ownRows(dy))));
    if (from === 'S1') ops.push(comm('gather features', (x) => group.allGatherFeatures(x), (dy) => owned(group.ownFeatures(dy))));
    if (from === 'P') ops.push(comm('all-reduce', (x) => group.allReduceSum(x), (dy) => owned(dy.clone())));
    return 'B';
  };
  const addParams = (specs: ShardedParamSpec[]): number[] => specs.map((spec) => params.push(spec) - 1);

  for (const layer of layers) {
    const full = layerParams(layer, shape, plan.seed);
    const sharding = plan.sharding[layer.id];
    const axis = sharding ? splitAxis(sharding.weight) : undefined;
    shape = layer.outputShape;
    if (layer.spec.kind === 'input') continue;

    if (axis === undefined || layer.spec.kind !== 'dense') {
      // Unsharded: feature-split or partial inputs are made whole first (only elementwise layers
      // could consume them as they are, and the agents have no standalone elementwise layer).
      if (layout === 'S1' || layout === 'P') layout = toWhole(layout);
      const sum = layout === 'S0' ? 'batchSplit' : 'replicated';
      const indices = addParams(full.map((spec) => ({ ...spec, sum })));
      ops.push({ kind: 'local', name: layer.id, params: indices, run: (x, p) => applyLayer(layer, x, p) });
      continue;
    }

    const activation = layer.spec.activation;
    const activate = (y: tf.Tensor) => (activation === 'relu' ? tf.relu(y) : activation === 'softmax' ? tf.softmax(y) : y);
    const [kernel, bias] = full;
    if (axis === 1) {
      if (layout !== 'B') layout = toWhole(layout);
      // Megatron's f: identity forward, all-reduce of the input gradient backward.
      ops.push(comm('enter column-parallel', (x) => owned(x.clone()), (dy) => group.allReduceSum(dy)));
      const indices = addParams([shardParam(kernel, 1, group.size, group.index), shardParam(bias, 0, group.size, group.index)]);
      ops.push({ kind: 'local', name: layer.id, params: indices, run: (x, p) => activate(tf.add(tf.matMul(x as tf.Tensor2D, p[0] as tf.Tensor2D), p[1])) });
      layout = 'S1';
      if (sharding!.output === 'B') layout = toWhole(layout);
    } else {
      if (layout !== 'S1') {
        layout = toWhole(layout);
        ops.push(comm('split features', (x) => owned(group.ownFeatures(x)), (dy) => group.allGatherFeatures(dy)));
      }
      const [k] = addParams([shardParam(kernel, 0, group.size, group.index)]);
      ops.push({ kind: 'local', name: `${layer.id} (partial)`, params: [k], run: (x, p) => tf.matMul(x as tf.Tensor2D, p[0] as tf.Tensor2D) });
      layout = toWhole('P');
      // The bias and activation apply once to the summed output, so every shard holds the bias whole.
      const [b] = addParams([{ ...bias, sum: 'replicated' }]);
      ops.push({ kind: 'local', name: `${layer.id} (bias)`, params: [b], run: (x, p) => activate(tf.add(x, p[0])) });
    }
  }

  if (layout === 'P' || (!isLast && layout !== 'S0')) layout = toWhole(layout);
  if (!isLast && layout === 'B') {
    ops.push(comm('split rows', (x) => owned(group.ownRows(x)), (dy, rows) => group.allGatherRows(dy, rows)));
    layout = 'S0';
  }
  return { ops, params, output: layout };
}
