/**
 * The order in which one pipeline stage runs its forward (F) and backward (B) passes of the m
 * micro-batches of a step, for each synchronous schedule.
 */
export interface PipelineOp {
  kind: 'forward' | 'backward';
  micro: number;
}

/**
 * GPipe: every forward first, then every backward (the flush at the end of the step). The backwards
 * run in the order the last stage returns gradients: it turns each micro-batch around as soon as its
 * forward arrives, so micro-batch 0's gradient comes first. In reverse order, stage p−2 would wait
 * for the last stage to finish all m micro-batches before its first backward — a bubble GPipe has not.
 */
export function gpipeOrder(microBatches: number): PipelineOp[] {
  const ops: PipelineOp[] = [];
  for (let m = 0; m < microBatches; m++) ops.push({ kind: 'forward', micro: m });
  for (let m = 0; m < microBatches; m++) ops.push({ kind: 'backward', micro: m });
  return ops;
}

/**
 * 1F1B (PipeDream-Flush): stage s of p warms up with p−s−1 forwards, then alternates one forward and
 * one backward, then drains the remaining backwards. Same bubble as GPipe, but at most p−s
 * micro-batches' activations are alive at once instead of m. `slack` more warm-up forwards on every
 * stage but the last (whose forward is its backward) leave room for message latency (async schedule).
 */
export function oneFOneBOrder(microBatches: number, stage: number, stages: number, slack = 0): PipelineOp[] {
  const warmup = Math.min(stages - stage - 1 + (stage < stages - 1 ? slack : 0), microBatches);
  const ops: PipelineOp[] = [];
  let nextF = 0;
  let nextB = 0;
  for (let i = 0; i < warmup; i++) ops.push({ kind: 'forward', micro: nextF++ });
  while (nextF < microBatches) {
    ops.push({ kind: 'forward', micro: nextF++ });
    ops.push({ kind: 'backward', micro: nextB++ });
  }
  while (nextB < microBatches) ops.push({ kind: 'backward', micro: nextB++ });
  return ops;
}

/** Most micro-batches whose activations a stage holds at once under this order. */
export function peakInFlight(ops: PipelineOp[]): number {
  let live = 0;
  let peak = 0;
  for (const op of ops) {
    live += op.kind === 'forward' ? 1 : -1;
    peak = Math.max(peak, live);
  }
  return peak;
}
