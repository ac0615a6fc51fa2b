import * as tf from '@tensorflow/tfjs-core';
import { globalBatchIndices } from '../../engine/data/dataOrder.js';
import { microBatchSize } from '../../engine/plan/placement.js';
import { virtualNodesPerReplica } from '../../engine/plan/virtualNodes.js';
import { gpipeOrder, oneFOneBOrder, type PipelineOp } from '../../engine/sim/scheduleOrder.js';
import { bytesToFloats, floatsToBytes } from '../comm/frame.js';
import { ringAllReduce } from '../comm/ringAllReduce.js';
import { gatherBatch } from '../data/mnist.js';
import { flatten, unflatten } from '../exec/stageModule.js';
import type { StageContext } from '../runtime/stageContext.js';

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

/** Indices of the training samples of micro-batch `m` of virtual node `v` at `step`. */
function microBatchIndices(ctx: StageContext, step: number, v: number, m: number): Uint32Array {
  const { plan, data } = ctx;
  const all = globalBatchIndices(plan.seed, step, plan.globalBatch, data.train.size);
  const size = microBatchSize(plan);
  const start = (v * plan.microBatches + m) * size;
  return all.subarray(start, start + size);
}

async function receiveTensor(ctx: StageContext, rank: number, tag: string, shape: number[]): Promise<tf.Tensor> {
  const message = await ctx.mesh.link(rank).receive(tag);
  return tf.tensor(bytesToFloats(message.payload), shape, 'float32');
}

function sendTensor(ctx: StageContext, rank: number, tag: string, t: tf.Tensor): void {
  ctx.mesh.link(rank).send({ type: 'tensor', tag }, floatsToBytes(t.dataSync() as Float32Array));
}

/**
 * One synchronous pipeline step. The stage runs the forward (F) and backward (B) passes of its
 * micro-batches in the order the schedule prescribes — the very order the simulator predicts from
 * (engine/sim/scheduleOrder.ts): GPipe's all-F-then-all-B, or 1F1B's interleaving that bounds the
 * activations in flight. The last stage turns each micro-batch around at once (its F computes the
 * loss and the input gradient). A replica with several virtual nodes runs them one after another.
 * Parameter gradients accumulate over everything, are summed over the stage's data-parallel group by
 * ring all-reduce, and every replica applies the same update: the mathematics of one big batch.
 */
export async function runPipelineStep(ctx: StageContext, step: number): Promise<StepResult> {
  const { plan, module } = ctx;
  const size = microBatchSize(plan);
  const inShape = [size, ...module.inputShape];
  const outShape = [size, ...module.outputShape];
  const order: PipelineOp[] = plan.schedule === '1f1b' ? oneFOneBOrder(plan.microBatches, ctx.me.stage, plan.stages.length) : gpipeOrder(plan.microBatches);
  let loss = 0;
  let computeMs = 0;
  const timed = <T>(f: () => T): T => {
    const t0 = performance.now();
    const out = f();
    computeMs += performance.now() - t0;
    return out;
  };
  const sendBackward = (dx: tf.Tensor, tag: string) => {
    if (ctx.prevRank !== null) sendTensor(ctx, ctx.prevRank, tag, dx);
    dx.dispose();
  };

  for (const v of virtualNodesOf(ctx)) {
    const stash = new Map<number, tf.Tensor>();
    for (const op of order) {
      const tag = (kind: string) => `s${step}/v${v}/${kind}/${op.micro}`;
      if (op.kind === 'forward') {
        const needsBatch = ctx.prevRank === null || ctx.nextRank === null;
        const batch = needsBatch ? gatherBatch(ctx.data.train, microBatchIndices(ctx, step, v, op.micro)) : null;
        const x = ctx.prevRank === null ? tf.tensor(batch!.images, inShape) : await receiveTensor(ctx, ctx.prevRank, tag('act'), inShape);
        if (ctx.nextRank === null) {
          const labels = tf.tensor2d(batch!.oneHot, [size, ctx.numClasses]);
          const result = timed(() => module.lossBackward(x, labels, plan.globalBatch));
          loss += result.loss;
          labels.dispose();
          x.dispose();
          sendBackward(result.dx, tag('grad'));
        } else {
          const y = timed(() => module.forward(x));
          sendTensor(ctx, ctx.nextRank, tag('act'), y);
          y.dispose();
          stash.set(op.micro, x);
        }
      } else if (ctx.nextRank !== null) {
        const dy = await receiveTensor(ctx, ctx.nextRank, tag('grad'), outShape);
        const x = stash.get(op.micro)!;
        const dx = timed(() => module.backward(x, dy));
        dy.dispose();
        x.dispose();
        stash.delete(op.micro);
        sendBackward(dx, tag('grad'));
      }
    }
  }

  const grads = module.takeGradients();
  const t0 = performance.now();
  let reduced = grads;
  if (ctx.dataParallelGroup.length > 1) {
    const flat = flatten(grads);
    await ringAllReduce(flat, ctx.me.rank, ctx.dataParallelGroup, ctx.mesh.links, `s${step}/allreduce`);
    grads.forEach((g) => g.dispose());
    reduced = unflatten(flat, module.params);
  }
  const allReduceMs = performance.now() - t0;
  timed(() => ctx.optimizer.apply(module.params, reduced));
  return { loss, computeMs, allReduceMs };
}
