import * as tf from '@tensorflow/tfjs-core';
import { receiveRows, sendRows } from '../schedule/rowTransfer.js';
import { rowPieces, rowsOfShard } from '../schedule/stageBoundary.js';
import { addEvalSums, type EvalSums } from '../exec/evalSums.js';
import type { StageContext } from './stageContext.js';

const CHUNK = 250;

/** An agent's share of an evaluation: the executor's sums and the samples whose loss is in lossSum. */
export interface EvalResult extends EvalSums {
  count: number;
}

/**
 * Forward the validation split through the pipeline. Each replica takes an equal share; only
 * last-stage agents see the outputs and so return non-zero counts (each sample counted once, also
 * when a last stage is sharded). The first stage reads the inputs, the last the targets.
 */
export async function runPipelineEval(ctx: StageContext, evalId: number): Promise<EvalResult> {
  const { plan, me, module, mesh } = ctx;
  const split = ctx.data.validation;
  const replicas = plan.stages[0].dataParallel;
  const share = Math.ceil(split.size / replicas);
  const from = me.replica * share;
  const to = Math.min(split.size, from + share);
  const isFirst = me.stage === 0;
  const isLast = me.stage === plan.stages.length - 1;
  const result: EvalResult = { correct: 0, total: 0, lossSum: 0, count: 0 };
  // A shard other than 0 returns nothing (the sums come from shard 0 alone); metrics only from executors that see whole outputs.
  const measure = ctx.measures;
  module.setPass?.(null);
  for (let start = from, k = 0; start < to; start += CHUNK, k++) {
    const n = Math.min(CHUNK, to - start);
    const [first, last] = rowsOfShard(n, plan.stages[me.stage].tensorParallel, me.shard);
    const indices = Uint32Array.from({ length: n }, (_, i) => start + i);
    const tag = `eval${evalId}/${k}`;
    if (ctx.tensorGroup) ctx.tensorGroup.phase = tag;
    const x = isFirst
      ? tf.tensor(split.gather(ctx.feeds.inputs, indices.subarray(first, last)), [last - first, ...module.inputShape])
      : await receiveRows(mesh, rowPieces(plan, me, me.stage - 1, n), tag, module.inputShape);
    if (isLast) {
      addEvalSums(result, await module.evaluate(x, split.gather(ctx.feeds.targets, indices), n, measure));
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
