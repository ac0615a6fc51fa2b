import type { TimelineEvent } from './timeline.js';

/**
 * One NTP-style ping-pong between the coordinator and an agent: the coordinator sends at `sentMs` and
 * receives the reply at `receivedMs` (its clock); the agent stamped `agentMs` (its clock) in between.
 */
export interface ClockSample {
  sentMs: number;
  agentMs: number;
  receivedMs: number;
}

/**
 * The agent's clock offset (agent − coordinator, ms) from the sample with the smallest round trip: its
 * reply was stamped at most rtt/2 from the midpoint, so that sample bounds the error tightest.
 */
export function clockOffset(samples: ClockSample[]): { offsetMs: number; rttMs: number } {
  if (samples.length === 0) throw new Error('No clock samples to estimate an offset from.');
  let best = samples[0];
  for (const s of samples) if (s.receivedMs - s.sentMs < best.receivedMs - best.sentMs) best = s;
  return { offsetMs: best.agentMs - (best.sentMs + best.receivedMs) / 2, rttMs: best.receivedMs - best.sentMs };
}

/**
 * Move events stamped in absolute agent-clock milliseconds onto the coordinator's axis, relative to
 * `originMs` (coordinator clock, e.g. when it started the step).
 */
export function alignEvents(events: TimelineEvent[], offsetMs: number, originMs: number): TimelineEvent[] {
  return events.map((e) => ({ ...e, startMs: e.startMs - offsetMs - originMs, endMs: e.endMs - offsetMs - originMs }));
}

/** The earliest start among agents' events on the coordinator's axis (each agent's offset removed); null when none. */
export function earliestAligned(recorded: Array<{ events: TimelineEvent[]; offsetMs: number }>): number | null {
  let earliest: number | null = null;
  for (const { events, offsetMs } of recorded) for (const e of events) earliest = Math.min(earliest ?? Infinity, e.startMs - offsetMs);
  return earliest;
}

const isCompute = (e: TimelineEvent) => e.kind === 'forward' || e.kind === 'backward';

/**
 * The bubble of one pipeline step from its measured (aligned) timeline: the idle share of the pipeline
 * phase, 1 − Σ compute / (stages × span), where the span runs from the first compute of any stage to
 * the last compute of any stage. That is the quantity (p−1)/(m+p−1) predicts for uniform stages.
 * Events of one replica (or of every replica, when `replica` is undefined and there is one).
 */
export function measuredBubble(events: TimelineEvent[], replica?: number): number {
  const compute = computeOf(events, replica);
  if (compute.length === 0) return 0;
  const stages = new Set(compute.map((e) => e.stage)).size;
  const busy = compute.reduce((sum, e) => sum + (e.endMs - e.startMs), 0);
  return 1 - busy / (stages * Math.max(spanOf(compute), 1e-9));
}

/** Milliseconds from the first compute of any stage to the last (0 without compute): the pipeline phase of a step. */
export function pipelineSpanMs(events: TimelineEvent[], replica?: number): number {
  return spanOf(computeOf(events, replica));
}

const spanOf = (compute: TimelineEvent[]) =>
  compute.length === 0 ? 0 : Math.max(...compute.map((e) => e.endMs)) - Math.min(...compute.map((e) => e.startMs));

const computeOf = (events: TimelineEvent[], replica?: number) =>
  events.filter((e) => isCompute(e) && (replica === undefined || e.replica === undefined || e.replica === replica));

/** Mean forward and backward milliseconds per micro-batch of each stage (a fused turn-around counts as its forward). */
export function stageComputeMs(events: TimelineEvent[]): Array<{ stage: number; forwardMs: number; backwardMs: number; fusedMs: number }> {
  const stages = [...new Set(events.map((e) => e.stage))].sort((a, b) => a - b);
  const mean = (list: TimelineEvent[]) => (list.length ? list.reduce((s, e) => s + e.endMs - e.startMs, 0) / list.length : 0);
  return stages.map((stage) => {
    const mine = events.filter((e) => e.stage === stage);
    return {
      stage,
      forwardMs: mean(mine.filter((e) => e.kind === 'forward' && !e.fused)),
      backwardMs: mean(mine.filter((e) => e.kind === 'backward')),
      fusedMs: mean(mine.filter((e) => e.kind === 'forward' && e.fused)),
    };
  });
}
