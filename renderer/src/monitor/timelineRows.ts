import type { TimelineJobEvent } from '../../../engine/protocol/events';
import type { TimelineEvent } from '../../../engine/protocol/timeline';
import { stepSpan } from './rankStats';

export interface TimelineRows {
  /** One per rank, in rank order, events in ms from the step's first event. */
  measured: Array<{ rank: number; stage: number; replica: number; events: TimelineEvent[] }>;
  /** One per stage of the plan, from the cost model. */
  predicted: Array<{ stage: number; events: TimelineEvent[] }>;
  /** The common axis: the longer of the measured step and the predicted one. */
  spanMs: number;
  measuredMs: number;
  predictedMs: number;
}

/** A sampled step's events per rank and the prediction's per stage, on one time axis from 0. */
export function timelineRows(sample: TimelineJobEvent | undefined, predicted: TimelineEvent[] | undefined): TimelineRows {
  const measured = new Map<number, { rank: number; stage: number; replica: number; events: TimelineEvent[] }>();
  let measuredMs = 0;
  if (sample) {
    const { startMs, endMs } = stepSpan(sample.events);
    measuredMs = endMs - startMs;
    for (const m of sample.memory) measured.set(m.rank, { rank: m.rank, stage: m.stage, replica: m.replica, events: [] });
    for (const e of sample.events) {
      const rank = e.rank ?? -1;
      const row = measured.get(rank) ?? { rank, stage: e.stage, replica: e.replica ?? 0, events: [] };
      row.events.push({ ...e, startMs: e.startMs - startMs, endMs: e.endMs - startMs });
      measured.set(rank, row);
    }
  }
  const stages = new Map<number, TimelineEvent[]>();
  let predictedMs = 0;
  for (const e of predicted ?? []) {
    stages.set(e.stage, [...(stages.get(e.stage) ?? []), e]);
    predictedMs = Math.max(predictedMs, e.endMs);
  }
  return {
    measured: [...measured.values()].sort((a, b) => a.rank - b.rank),
    predicted: [...stages.entries()].sort(([a], [b]) => a - b).map(([stage, events]) => ({ stage, events })),
    spanMs: Math.max(measuredMs, predictedMs),
    measuredMs,
    predictedMs,
  };
}
