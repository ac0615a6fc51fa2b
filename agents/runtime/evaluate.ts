import * as tf from '@tensorflow/tfjs-core';
import { gatherBatch } from '../data/mnist.js';
import { receiveRows, sendRows } from '../schedule/rowTransfer.js';
import { rowPieces, rowsOfShard } from '../schedule/stageBoundary.js';
import type { StageContext } from './stageContext.js';

const CHUNK = 250;

export interface EvalResult {
  correct: number;
  lossSum: number;
  count: number;
}

/**
 * Forward the held-out digits through the pipeline. Each replica takes an equal share of the test set;
 * only last-stage agents see logits and so return non-zero counts (each sample counted once, also
 * when a last stage is sharded).
 */
export async function runPipelineEval(ctx: StageContext, evalId: number): Promise<EvalResult> {
  const { plan, me, module, mesh } = ctx;
  const test = ctx.data.test;
  const replicas = plan.stages[0].dataParallel;
  const share = Math.ceil(test.size / replicas);
  const from = me.replica * share;
  const to = Math.min(test.size, from + share);
  const isFirst = me.stage === 0;
  const isLast = me.stage === plan.stages.length - 1;
  const pixels = module.inputShape.reduce((a, b) => a * b, 1);
  const result: EvalResult = { correct: 0, lossSum: 0, count: 0 };
  for (let start = from, k = 0; start < to; start += CHUNK, k++) {
    const n = Math.min(CHUNK, to - start);
    const [first, last] = rowsOfShard(n, plan.stages[me.stage].tensorParallel, me.shard);
    const batch = isFirst || isLast ? gatherBatch(test, Array.from({ length: n }, (_, i) => start + i)) : null;
    const tag = `eval${evalId}/${k}`;
    if (ctx.tensorGroup) ctx.tensorGroup.phase = tag;
    const x = isFirst
      ? tf.tensor(batch!.images.subarray(first * pixels, last * pixels), [last - first, ...module.inputShape])
      : await receiveRows(mesh, rowPieces(plan, me, me.stage - 1, n), tag, module.inputShape);
    if (isLast) {
      const { correct, lossSum } = await module.evaluate(x, batch!.labels, n);
      result.correct += correct;
      result.lossSum += lossSum;
      if (me.shard === 0) result.count += n;
    } else {
      const y = await module.infer(x, n);
      sendRows(mesh, rowPieces(plan, me, me.stage + 1, n), tag, y, first);
      y.dispose();
    }
    x.dispose();
  }
  return result;
}
