import type { TimelineEvent } from '../protocol/timeline.js';
import { oneFOneBOrder, type PipelineOp } from './scheduleOrder.js';
import { scheduleTraits } from '../plan/scheduleTraits.js';

/** Costs of one pipeline stage for one micro-batch (and, once per step, its gradient all-reduce). */
export interface StageCost {
  forwardMs: number;
  backwardMs: number;
  /** Moving this stage's output activation to the next stage (0 for the last stage). */
  sendActivationMs: number;
  /** Moving the gradient of this stage's input back to the previous stage (0 for the first stage). */
  sendGradientMs: number;
  /** Gradient all-reduce (or reduce-scatter + all-gather) over the stage's data-parallel group. */
  allReduceMs: number;
  /** Fraction of the all-reduce hidden behind the backward pass (bucketed overlap); 0 = none. */
  allReduceOverlap?: number;
  /**
   * Backward time the all-reduce can hide behind (default: every micro-batch's backward). A runtime
   * that hands gradients over only during the step's last backward pass hides at most that one.
   */
  overlapWindowMs?: number;
  optimizerMs: number;
  activationBytes?: number;
}

export interface PipelineSimulation {
  schedule: 'gpipe' | '1f1b' | 'async';
  /** Wall time of one optimizer step. For `async`, the steady-state time per global batch. */
  stepMs: number;
  /** When the last backward finishes (before gradient synchronisation and the update). */
  pipelineMs: number;
  /** Idle share of the pipeline phase across stages: (p−1)/(m+p−1) for GPipe/1F1B on uniform stages. */
  bubbleFraction: number;
  /** Busy compute per stage (forward + backward + optimizer). */
  computeMs: number[];
  /** Communication per stage that is not hidden behind computation. */
  exposedCommMs: number[];
  events: TimelineEvent[];
}

/**
 * Simulate one step of a pipeline schedule as list scheduling: every stage runs its operations in the
 * schedule's order, each as soon as the stage is free and its input has arrived (a forward needs the
 * previous stage's forward plus the activation transfer; a backward needs the next stage's backward
 * plus the gradient transfer, and its own forward).
 */
export function simulatePipeline(stages: StageCost[], microBatches: number, schedule: 'gpipe' | '1f1b' | 'async'): PipelineSimulation {
  const traits = scheduleTraits(schedule);
  if (!traits.stepBarrier) return simulateAsync(stages, microBatches);
  const p = stages.length;
  // The last stage turns every micro-batch around at once (forward, loss, backward) under either
  // schedule, as the agents run it: its order is F0 B0 F1 B1 …, which is 1F1B's for the last stage.
  const orders: PipelineOp[][] = stages.map((_, s) => (s < p - 1 ? traits.stageOrder({ microBatches, stages }, s) : oneFOneBOrder(microBatches, s, p)));
  const fEnd: number[][] = stages.map(() => new Array(microBatches).fill(NaN));
  const bEnd: number[][] = stages.map(() => new Array(microBatches).fill(NaN));
  const next = new Array(p).fill(0);
  const free = new Array(p).fill(0);
  const events: TimelineEvent[] = [];
  let remaining = p * 2 * microBatches;

  while (remaining > 0) {
    let progressed = false;
    for (let s = 0; s < p; s++) {
      while (next[s] < orders[s].length) {
        const op = orders[s][next[s]];
        const ready = readyTime(op, s, stages, fEnd, bEnd);
        if (Number.isNaN(ready)) break;
        const start = Math.max(free[s], ready);
        const cost = stages[s];
        const end = start + (op.kind === 'forward' ? cost.forwardMs : cost.backwardMs);
        (op.kind === 'forward' ? fEnd : bEnd)[s][op.micro] = end;
        events.push({ stage: s, kind: op.kind, micro: op.micro, startMs: start, endMs: end });
        const sendMs = op.kind === 'forward' ? (s < p - 1 ? cost.sendActivationMs : 0) : s > 0 ? cost.sendGradientMs : 0;
        if (sendMs > 0) events.push({ stage: s, kind: 'send', micro: op.micro, startMs: end, endMs: end + sendMs, bytes: cost.activationBytes });
        free[s] = end;
        next[s] += 1;
        remaining -= 1;
        progressed = true;
      }
    }
    if (!progressed) throw new Error(`The ${schedule} schedule deadlocked in simulation; this is a bug in the schedule order.`);
  }

  const pipelineMs = Math.max(...free);
  const computeMs = stages.map((c) => microBatches * (c.forwardMs + c.backwardMs));
  const bubbleFraction = 1 - computeMs.reduce((a, b) => a + b, 0) / (p * pipelineMs || 1);
  const exposedCommMs: number[] = [];
  let stepMs = 0;
  stages.forEach((c, s) => {
    const hidden = Math.min(c.allReduceMs * (c.allReduceOverlap ?? 0), c.overlapWindowMs ?? microBatches * c.backwardMs);
    const exposed = c.allReduceMs - hidden;
    const arStart = free[s] - hidden;
    if (c.allReduceMs > 0) events.push({ stage: s, kind: 'allreduce', startMs: arStart, endMs: arStart + c.allReduceMs });
    const optStart = free[s] + exposed;
    events.push({ stage: s, kind: 'optimizer', startMs: optStart, endMs: optStart + c.optimizerMs });
    exposedCommMs.push(exposed);
    computeMs[s] += c.optimizerMs;
    stepMs = Math.max(stepMs, optStart + c.optimizerMs);
  });
  return { schedule: schedule, stepMs, pipelineMs, bubbleFraction, computeMs, exposedCommMs, events };
}

function readyTime(op: PipelineOp, s: number, stages: StageCost[], fEnd: number[][], bEnd: number[][]): number {
  const p = stages.length;
  if (op.kind === 'forward') return s === 0 ? 0 : fEnd[s - 1][op.micro] + stages[s - 1].sendActivationMs;
  const ownForward = fEnd[s][op.micro];
  if (s === p - 1) return ownForward;
  return Math.max(ownForward, bEnd[s + 1][op.micro] + stages[s + 1].sendGradientMs);
}

/**
 * PipeMare's asynchronous pipeline never flushes: in steady state each stage alternates forwards and
 * backwards of different micro-batches without waiting, so a global batch of m micro-batches takes as
 * long as the slowest stage needs for its m forwards and backwards. Bubbles exist only in the one-off
 * fill at the start of training, which this steady-state model leaves out.
 */
function simulateAsync(stages: StageCost[], microBatches: number): PipelineSimulation {
  const busy = stages.map((c) => microBatches * (c.forwardMs + c.backwardMs));
  const comm = stages.map((c) => Math.max(c.sendActivationMs, c.sendGradientMs) * microBatches);
  // Transfers overlap compute (they run on the network, not the device); a stage is bound by the larger.
  const perStage = stages.map((c, s) => Math.max(busy[s], comm[s]) + c.allReduceMs * (1 - (c.allReduceOverlap ?? 0)) + c.optimizerMs);
  const stepMs = Math.max(...perStage);
  const pipelineMs = Math.max(...busy.map((b, s) => Math.max(b, comm[s])));
  const events: TimelineEvent[] = [];
  stages.forEach((c, s) => {
    let t = 0;
    for (let m = 0; m < microBatches; m++) {
      events.push({ stage: s, kind: 'forward', micro: m, startMs: t, endMs: t + c.forwardMs });
      t += c.forwardMs;
      events.push({ stage: s, kind: 'backward', micro: m, startMs: t, endMs: t + c.backwardMs });
      t += c.backwardMs;
    }
  });
  return {
    schedule: 'async',
    stepMs,
    pipelineMs,
    bubbleFraction: 1 - busy.reduce((a, b) => a + b, 0) / (stages.length * pipelineMs || 1),
    computeMs: stages.map((c, s) => busy[s] + c.optimizerMs),
    exposedCommMs: stages.map((c, s) => Math.max(0, comm[s] - busy[s]) + c.allReduceMs * (1 - (c.allReduceOverlap ?? 0))),
    events,
  };
}
