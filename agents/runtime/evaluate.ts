import * as tf from '@tensorflow/tfjs-core';
import type { RowRead } from '../data/prefetcher.js';
import { evaluationDone, validationRows } from '../data/stepRows.js';
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
 * when a last stage is sharded). The first stage reads the inputs, the last the targets: each chunk's
 * rows are known in advance, so the next chunk's are read (by the prefetch worker) while this one computes.
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
  const chunkOf = (k: number) => {
    const start = from + k * CHUNK;
    const n = Math.min(CHUNK, to - start);
    const [first, last] = rowsOfShard(n, plan.stages[me.stage].tensorParallel, me.shard);
    return { n, first, last, indices: Uint32Array.from({ length: n }, (_, i) => start + i) };
  };
  const chunks = Math.max(0, Math.ceil((to - from) / CHUNK));
  // What chunk k reads here, exactly as it is read below (a prefetched read is only used for the very same rows).
  const readsOf = (k: number): RowRead[] => {
    if (k >= chunks) return [];
    const { first, last, indices } = chunkOf(k);
    return [...(isFirst ? [{ names: ctx.feeds.inputs, indices: indices.subarray(first, last) }] : []), ...(isLast ? [{ names: ctx.feeds.targets, indices }] : [])];
  };
  const rows = isFirst || isLast ? validationRows(ctx.data) : null;
  const before = rows && { hits: rows.hits, misses: rows.misses, at: performance.now() };
  let waitMs = 0;
  module.setPass?.(null);
  for (let k = 0; k < chunks; k++) {
    const { n, first, last, indices } = chunkOf(k);
    const tag = `eval${evalId}/${k}`;
    if (ctx.tensorGroup) ctx.tensorGroup.phase = tag;
    rows?.plan(k, readsOf); // this chunk's reads (in flight since the previous chunk) and the next chunk's
    const x = isFirst
      ? tf.tensor(await rows!.take(ctx.feeds.inputs, indices.subarray(first, last)), [last - first, ...module.inputShape])
      : await receiveRows(mesh, rowPieces(plan, me, me.stage - 1, n), tag, module.inputShape);
    try {
      if (isLast) {
        const targets = await rows!.take(ctx.feeds.targets, indices);
        addEvalSums(result, await module.evaluate(x, targets, n, measure));
        if (me.shard === 0) result.count += n;
      } else {
        const y = await module.infer(x, n);
        sendRows(mesh, rowPieces(plan, me, me.stage + 1, n), tag, y, first);
        y.dispose();
      }
    } finally {
      x.dispose(); // also when a read fails: the evaluation fails with the reader's message, nothing leaks
    }
    waitMs += rows?.waitMs ?? 0;
  }
  if (rows && before) evaluationDone(rows, evalId, before, waitMs);
  return result;
}
