import * as tf from '@tensorflow/tfjs-core';
import { globalBatchIndices } from '../../engine/data/dataOrder.js';
import { microBatchSize } from '../../engine/plan/placement.js';
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

/** Indices of the training samples of micro-batch `m` of this agent's replica at `step`. */
function microBatchIndices(ctx: StageContext, step: number, m: number): Uint32Array {
  const { plan, me, data } = ctx;
  const all = globalBatchIndices(plan.seed, step, plan.globalBatch, data.train.size);
  const size = microBatchSize(plan);
  const start = (me.replica * plan.microBatches + m) * size;
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
 * One synchronous GPipe step: the forward passes of all micro-batches flow down the pipeline, then
 * their backward passes flow back in reverse order (the last stage turns each micro-batch around as
 * soon as its forward is done). Parameter gradients accumulate over micro-batches, are summed over the
 * stage's data-parallel group by ring all-reduce, and every replica applies the same update.
 */
export async function runGpipeStep(ctx: StageContext, step: number): Promise<StepResult> {
  const { plan, module } = ctx;
  const size = microBatchSize(plan);
  const inShape = [size, ...module.inputShape];
  const outShape = [size, ...module.outputShape];
  const stash: tf.Tensor[] = [];
  let loss = 0;
  let computeMs = 0;
  const timed = <T>(f: () => T): T => {
    const t0 = performance.now();
    const out = f();
    computeMs += performance.now() - t0;
    return out;
  };

  const sendBackward = (dx: tf.Tensor, m: number) => {
    if (ctx.prevRank !== null) sendTensor(ctx, ctx.prevRank, `s${step}/grad/${m}`, dx);
    dx.dispose();
  };

  for (let m = 0; m < plan.microBatches; m++) {
    let x: tf.Tensor;
    let labels: tf.Tensor | null = null;
    const needsBatch = ctx.prevRank === null || ctx.nextRank === null;
    const batch = needsBatch ? gatherBatch(ctx.data.train, microBatchIndices(ctx, step, m)) : null;
    if (ctx.prevRank === null) x = tf.tensor(batch!.images, inShape);
    else x = await receiveTensor(ctx, ctx.prevRank, `s${step}/act/${m}`, inShape);
    if (ctx.nextRank === null) {
      labels = tf.tensor2d(batch!.oneHot, [size, ctx.numClasses]);
      const result = timed(() => module.lossBackward(x, labels!, plan.globalBatch));
      loss += result.loss;
      labels.dispose();
      x.dispose();
      sendBackward(result.dx, m);
    } else {
      const y = timed(() => module.forward(x));
      sendTensor(ctx, ctx.nextRank, `s${step}/act/${m}`, y);
      y.dispose();
      stash[m] = x;
    }
  }

  if (ctx.nextRank !== null) {
    for (let m = plan.microBatches - 1; m >= 0; m--) {
      const dy = await receiveTensor(ctx, ctx.nextRank, `s${step}/grad/${m}`, outShape);
      const dx = timed(() => module.backward(stash[m], dy));
      dy.dispose();
      stash[m].dispose();
      sendBackward(dx, m);
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
