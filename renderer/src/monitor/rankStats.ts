import type { TimelineJobEvent } from '../../../engine/protocol/events';
import type { TimelineEvent, TimelineKind } from '../../../engine/protocol/timeline';

/** One row of the per-agent table: who holds the rank and what it did in a sampled step. */
export interface RankStats {
  rank: number;
  host: string;
  stage: number;
  replica: number;
  /** Share of the step (first event to last, over all ranks) the rank computed: forward, backward, optimizer. */
  busy: number;
  /** Time in communication (sends, receives, all-reduce); it may overlap computation. */
  commMs: number;
  /** Peak bytes of stashed activations during the step. */
  peakStashedBytes: number;
  peakStashed: number;
}

const COMPUTE = new Set<TimelineKind>(['forward', 'backward', 'optimizer']);

/** Total length of the union of intervals (overlapping events of one rank count once). */
export function coveredMs(intervals: Array<Pick<TimelineEvent, 'startMs' | 'endMs'>>): number {
  const sorted = [...intervals].sort((a, b) => a.startMs - b.startMs);
  let total = 0;
  let end = -Infinity;
  for (const { startMs, endMs } of sorted) {
    if (endMs <= end) continue;
    total += endMs - Math.max(startMs, end);
    end = endMs;
  }
  return total;
}

/** Start and end of a sampled step: its earliest and latest event. */
export function stepSpan(events: TimelineEvent[]): { startMs: number; endMs: number } {
  if (events.length === 0) return { startMs: 0, endMs: 0 };
  let startMs = Infinity;
  let endMs = -Infinity;
  for (const e of events) {
    startMs = Math.min(startMs, e.startMs);
    endMs = Math.max(endMs, e.endMs);
  }
  return { startMs, endMs };
}

/**
 * Per rank of a sampled step, its busy share, communication time and activation memory; host from who
 * held the rank (membership or agent events). Ranks in `memory` or the events, in rank order.
 */
export function rankStats(sample: TimelineJobEvent, hosts: Map<number, string>): RankStats[] {
  const span = stepSpan(sample.events);
  const length = span.endMs - span.startMs;
  const ranks = new Map<number, { stage: number; replica: number; events: TimelineEvent[] }>();
  for (const m of sample.memory) ranks.set(m.rank, { stage: m.stage, replica: m.replica, events: [] });
  for (const e of sample.events) {
    if (e.rank === undefined) continue;
    const entry = ranks.get(e.rank) ?? { stage: e.stage, replica: e.replica ?? 0, events: [] };
    entry.events.push(e);
    ranks.set(e.rank, entry);
  }
  return [...ranks.entries()]
    .sort(([a], [b]) => a - b)
    .map(([rank, r]) => {
      const memory = sample.memory.find((m) => m.rank === rank);
      return {
        rank,
        host: hosts.get(rank) ?? '—',
        stage: r.stage,
        replica: r.replica,
        busy: length > 0 ? coveredMs(r.events.filter((e) => COMPUTE.has(e.kind))) / length : 0,
        commMs: coveredMs(r.events.filter((e) => !COMPUTE.has(e.kind))),
        peakStashedBytes: memory?.peakStashedBytes ?? 0,
        peakStashed: memory?.peakStashed ?? 0,
      };
    });
}
