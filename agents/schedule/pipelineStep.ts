import * as tf from '@tensorflow/tfjs-core';
import { globalBatchIndices, sliceBounds } from '../../engine/data/dataOrder.js';
import { virtualNodeTotal, virtualNodesPerReplica } from '../../engine/plan/virtualNodes.js';
import type { PipelineOp } from '../../engine/sim/scheduleOrder.js';
import type { TimelineKind } from '../../engine/protocol/timeline.js';
import { sleepThread } from '../exec/threadWait.js';
import type { StageContext } from '../runtime/stageContext.js';
import { clockMs, timeline } from '../runtime/timelineRecorder.js';
import { receiveRows, sendRows } from './rowTransfer.js';
import { rowPieces, rowsOfShard, type RowPiece } from './stageBoundary.js';
import { StepGradients } from './synchronizeGradients.js';
import { allReduce } from '../comm/collectives.js';
import { scheduleTraits } from '../../engine/plan/scheduleTraits.js';
import type { RowRead } from '../data/prefetcher.js';
import { beginStep, trainingRows } from '../data/stepRows.js';
import { memoryUpdateBegins } from '../runtime/memoryWatermark.js';

export interface StepResult {
  /** This agent's share of the step's mean loss (non-zero on last-stage agents only). */
  loss: number;
  computeMs: number;
  allReduceMs: number;
}

/** Global ids of the virtual nodes this agent's replica runs: consecutive slices of the global batch. */
export function virtualNodesOf(ctx: StageContext): number[] {
  const perReplica = virtualNodesPerReplica(ctx.plan, ctx.me.stage);
  const first = perReplica.slice(0, ctx.me.replica).reduce((a, b) => a + b, 0);
  return Array.from({ length: perReplica[ctx.me.replica] }, (_, i) => first + i);
}

/** Indices of the training samples of every row of `step` (fewer than the global batch on an epoch's last step). */
export function stepIndices(ctx: StageContext, step: number): Uint32Array {
  const { plan, data } = ctx;
  return globalBatchIndices(plan.seed, step, plan.globalBatch, data.train.size, plan.shuffle !== false);
}

/** Indices of the training samples of micro-batch `m` of virtual node `v`, of a step's samples `all`. */
export function microBatchIndices(plan: StageContext['plan'], all: Uint32Array, v: number, m: number): Uint32Array {
  const [start, end] = sliceBounds(all.length, virtualNodeTotal(plan) * plan.microBatches, v * plan.microBatches + m);
  return all.subarray(start, end);
}

/** The gathers this agent makes at `step`, in the order it makes them (what the prefetcher reads ahead). */
function stepReads(ctx: StageContext, step: number): RowRead[] {
  const { plan, me, feeds } = ctx;
  const all = stepIndices(ctx, step);
  const reads: RowRead[] = [];
  for (const v of virtualNodesOf(ctx)) {
    for (let m = 0; m < plan.microBatches; m++) {
      const samples = microBatchIndices(plan, all, v, m);
      const [first, last] = rowsOfShard(samples.length, plan.stages[me.stage].tensorParallel, me.shard);
      if (me.stage === 0) reads.push({ names: feeds.inputs, indices: samples.subarray(first, last) });
      if (me.stage === plan.stages.length - 1) reads.push({ names: feeds.targets, indices: samples });
    }
  }
  return reads;
}

/**
 * One synchronous pipeline step. The stage runs the forward (F) and backward (B) passes of its
 * micro-batches in the order the schedule prescribes — the very order the simulator predicts from
 * (engine/sim/scheduleOrder.ts): GPipe's all-F-then-all-B, or 1F1B's interleaving that bounds the
 * activations in flight. The last stage turns each micro-batch around at once (its F computes the
 * loss and the input gradient). A replica with several virtual nodes runs them one after another.
 * A tensor-parallel shard handles its rows of each micro-batch at the stage's edges (rowPieces).
 * Parameter gradients accumulate over everything, are summed over the stage's devices, and every
 * replica applies the same update: the mathematics of one big batch.
 */
export async function runPipelineStep(ctx: StageContext, step: number): Promise<StepResult> {
  const { plan, module, mesh, me } = ctx;
  // A micro-batch's rows, and which of them travel between which agents: the same for every
  // micro-batch of a full step, split by rows on an epoch's smaller last step.
  const all = stepIndices(ctx, step);
  const edges = (samples: Uint32Array) => {
    const [first, last] = rowsOfShard(samples.length, plan.stages[me.stage].tensorParallel, me.shard);
    return { first, last, fromPrev: rowPieces(plan, me, me.stage - 1, samples.length), toNext: rowPieces(plan, me, me.stage + 1, samples.length) };
  };
  const isFirst = me.stage === 0;
  const isLast = me.stage === plan.stages.length - 1;
  const order: PipelineOp[] = scheduleTraits(plan.schedule).stageOrder(plan, me.stage);
  let loss = 0;
  let computeMs = 0;
  // The rows of this step's micro-batches and the next step's are read ahead, beside the compute.
  const rows = trainingRows(ctx.data);
  if (isFirst || isLast) beginStep(rows, step, (s) => stepReads(ctx, s));
  const timed = async <T>(f: () => Promise<T>, kind: TimelineKind, micro?: number, fused?: boolean): Promise<T> => {
    const t0 = performance.now();
    const start = clockMs();
    const out = await f();
    // A slowed agent (heterogeneity benchmarks) takes longer without using a core for it.
    if (ctx.slowdown > 1 && kind !== 'optimizer') sleepThread((ctx.slowdown - 1) * (performance.now() - t0));
    timeline.add(kind, start, clockMs(), { micro, fused });
    computeMs += performance.now() - t0;
    return out;
  };
  const receive = async (pieces: RowPiece[], tag: string, rowShape: number[], micro: number) => {
    const start = clockMs();
    const t = await receiveRows(mesh, pieces, tag, rowShape);
    timeline.add('recv', start, clockMs(), { micro, bytes: t.size * 4 });
    return t;
  };
  const send = (pieces: RowPiece[], tag: string, t: tf.Tensor, micro: number, first: number) => {
    const start = clockMs();
    sendRows(mesh, pieces, tag, t, first);
    timeline.add('send', start, clockMs(), { micro, bytes: t.size * 4 });
  };
  const sendBackward = (dx: tf.Tensor | null, tag: string, micro: number, edge: ReturnType<typeof edges>) => {
    if (dx && !isFirst) send(edge.fromPrev, tag, dx, micro, edge.first);
    dx?.dispose();
  };

  const gradients = new StepGradients(ctx, step);
  const vnodes = virtualNodesOf(ctx);
  // The weight-regularization penalty counts once per step: each replica adds its rows' share of it.
  const replicaRows = vnodes.reduce((n, v) => n + Array.from({ length: plan.microBatches }, (_, m) => microBatchIndices(plan, all, v, m).length).reduce((a, b) => a + b, 0), 0);
  loss += module.regularize?.(replicaRows / all.length) ?? 0;
  // The step's last backward pass finishes the gradients: it may hand them to their all-reduce early.
  const lastBackward = isLast ? order.filter((o) => o.kind === 'forward').pop()! : order.filter((o) => o.kind === 'backward').pop()!;
  for (const v of vnodes) {
    const stash = new Map<number, tf.Tensor>();
    for (const op of order) {
      const onFinal = v === vnodes[vnodes.length - 1] && op === lastBackward ? gradients.onFinal : undefined;
      if (ctx.tensorGroup) ctx.tensorGroup.phase = `s${step}/v${v}/${op.kind}${op.micro}`;
      const tag = (kind: string) => `s${step}/v${v}/${kind}/${op.micro}`;
      const samples = microBatchIndices(plan, all, v, op.micro);
      const edge = edges(samples);
      const size = samples.length;
      if (op.kind === 'forward') {
        module.setPass?.({ seed: plan.seed, step, samples });
        const x = isFirst
          ? tf.tensor(await rows.take(ctx.feeds.inputs, samples.subarray(edge.first, edge.last)), [edge.last - edge.first, ...module.inputShape])
          : await receive(edge.fromPrev, tag('act'), module.inputShape, op.micro);
        if (isLast) {
          const targets = await rows.take(ctx.feeds.targets, samples);
          // The loss is the mean over the step's rows (all of them: model.fit's smaller last batch too).
          const result = await timed(() => module.lossBackward(x, targets, size, all.length, onFinal), 'forward', op.micro, true);
          loss += result.loss;
          x.dispose();
          sendBackward(result.dx, tag('grad'), op.micro, edge);
        } else {
          const y = await timed(() => module.forward(x, size), 'forward', op.micro);
          send(edge.toNext, tag('act'), y, op.micro, edge.first);
          y.dispose();
          stash.set(op.micro, x);
          timeline.stashed([...stash.values(), ...module.keptTensors()]);
        }
      } else if (!isLast) {
        const dy = await receive(edge.toNext, tag('grad'), module.outputShape, op.micro);
        const x = stash.get(op.micro)!;
        const dx = await timed(() => module.backward(x, dy, size, onFinal), 'backward', op.micro);
        dy.dispose();
        x.dispose();
        stash.delete(op.micro);
        sendBackward(dx, tag('grad'), op.micro, edge);
      }
    }
  }

  // Summation over the stage's devices and the update, as one event: GradientSync interleaves them.
  const bytes = module.params.reduce((n, p) => n + p.size * 4, 0);
  memoryUpdateBegins();
  const { allReduceMs } = await timeline.timeAsync('allreduce', () => gradients.finish(step), { bytes });
  module.applyConstraints?.();
  await updateBatchNormStatistics(ctx, step);
  return { loss, computeMs, allReduceMs };
}

/**
 * Batch-norm moving statistics: every replica of the stage adds up its slices' statistics and applies
 * the same update (exec/graph/batchNormStatistics.ts), so replicas stay identical.
 */
async function updateBatchNormStatistics(ctx: StageContext, step: number): Promise<void> {
  const stats = ctx.graphStage?.batchNorm;
  if (!stats || stats.size === 0) return;
  const sums = stats.sums();
  await allReduce(ctx.dataGroup, sums, `bn-stats/${step}`);
  stats.apply(sums);
}
