import * as tf from '@tensorflow/tfjs-core';
import { bytesToFloats, floatsToBytes } from '../comm/frame.js';
import { gatherBatch } from '../data/mnist.js';
import { countCorrect, crossEntropySum } from '../exec/loss.js';
import type { StageContext } from './stageContext.js';

const CHUNK = 250;

export interface EvalResult {
  correct: number;
  lossSum: number;
  count: number;
}

/**
 * Forward the held-out digits through the pipeline. Each replica takes an equal share of the test set;
 * only last-stage agents see logits and so return non-zero counts.
 */
export async function runPipelineEval(ctx: StageContext, evalId: number): Promise<EvalResult> {
  const test = ctx.data.test;
  const replicas = ctx.plan.stages[0].dataParallel;
  const share = Math.ceil(test.size / replicas);
  const from = ctx.me.replica * share;
  const to = Math.min(test.size, from + share);
  const result: EvalResult = { correct: 0, lossSum: 0, count: 0 };
  for (let start = from, k = 0; start < to; start += CHUNK, k++) {
    const n = Math.min(CHUNK, to - start);
    const indices = Array.from({ length: n }, (_, i) => start + i);
    const batch = ctx.prevRank === null || ctx.nextRank === null ? gatherBatch(test, indices) : null;
    const tag = `eval${evalId}/${k}`;
    const x =
      ctx.prevRank === null
        ? tf.tensor(batch!.images, [n, ...ctx.module.inputShape])
        : tf.tensor(bytesToFloats((await ctx.mesh.link(ctx.prevRank).receive(tag)).payload), [n, ...ctx.module.inputShape]);
    const y = ctx.module.forward(x);
    x.dispose();
    if (ctx.nextRank !== null) {
      ctx.mesh.link(ctx.nextRank).send({ type: 'tensor', tag }, floatsToBytes(y.dataSync() as Float32Array));
    } else {
      tf.tidy(() => {
        const labels = tf.tensor2d(batch!.oneHot, [n, ctx.numClasses]);
        result.correct += countCorrect(y, labels);
        result.lossSum += crossEntropySum(y, labels, 1).dataSync()[0];
      });
      result.count += n;
    }
    y.dispose();
  }
  return result;
}
