import { mkdirSync, renameSync, writeFileSync } from 'node:fs';
import { dirname } from 'node:path';
import { microBatchSize, type Placement } from '../../engine/plan/placement.js';
import { alignEvents, clockOffset, type ClockSample } from '../../engine/protocol/clockAlign.js';
import type { TimelineJobEvent } from '../../engine/protocol/events.js';
import type { JobProfile, LayerTiming, LinkMeasurement } from '../../engine/protocol/profile.js';
import type { TimelineEvent } from '../../engine/protocol/timeline.js';
import type { Message } from '../comm/frame.js';
import { clockMs } from '../runtime/timelineRecorder.js';
import type { TrainingContext } from './trainingLoop.js';

export interface ClockEstimate {
  offsetMs: number;
  rttMs: number;
}

/**
 * NTP-style clock offsets of every agent against the coordinator: `rounds` pings to all agents, each
 * answered at once with the agent's clock; per agent, the sample with the smallest round trip wins.
 */
export async function syncClocks(ctx: TrainingContext, rounds = 16): Promise<ClockEstimate[]> {
  const samples: ClockSample[][] = ctx.active.map(() => []);
  for (let seq = 0; seq < rounds; seq++) {
    const replies = ctx.expect(`clock:${seq}`);
    const sentMs = clockMs();
    ctx.broadcast({ type: 'clock', seq });
    for (const m of await replies) samples[Number(m.header.rank)].push({ sentMs, agentMs: Number(m.header.agentMs), receivedMs: Number(m.header.receivedMs) });
  }
  return samples.map((s) => clockOffset(s));
}

/** Ask every agent to profile its stage and links; assemble profile.json's content. */
export async function collectProfile(ctx: TrainingContext, layout: Placement[], clocks: ClockEstimate[], options: { batches?: number[]; repeats?: number; synthetic: boolean }): Promise<JobProfile> {
  const { plan, active } = ctx;
  const replies = ctx.expect('profile');
  const b = microBatchSize(plan);
  const batches = options.batches ?? [...new Set([Math.max(1, Math.floor(b / 4)), b, Math.max(b, Math.min(plan.globalBatch, 4 * b))])];
  ctx.broadcast({ type: 'profile', batches, repeats: options.repeats ?? 3 });
  const byRank = new Map((await replies).map((m) => [Number(m.header.rank), m.header]));
  const layers: LayerTiming[] = [];
  const links: LinkMeasurement[] = [];
  const agents = active.map((agent, rank) => {
    const h = byRank.get(rank)!;
    layers.push(...(h.layers as LayerTiming[]));
    links.push(...(h.links as LinkMeasurement[]));
    const p = layout[rank];
    return {
      rank,
      stage: p.stage,
      replica: p.replica,
      device: p.device,
      host: agent.host,
      backend: agent.backend,
      clockOffsetMs: clocks[rank].offsetMs,
      clockRttMs: clocks[rank].rttMs,
      ...(typeof h.optimizerMsPerParam === 'number' ? { optimizerMsPerParam: h.optimizerMsPerParam } : {}),
      ...(typeof h.optimizerMsPerTensor === 'number' ? { optimizerMsPerTensor: h.optimizerMsPerTensor } : {}),
      ...(options.synthetic ? { synthetic: true } : {}),
    };
  });
  return { version: 1, model: plan.model, createdAt: new Date().toISOString(), executor: { recomputeForward: plan.recompute }, agents, layers, links };
}

/** Write profile.json atomically (temporary file, rename). */
export function writeProfile(path: string, profile: JobProfile): void {
  mkdirSync(dirname(path), { recursive: true });
  const tmp = `${path}.tmp`;
  writeFileSync(tmp, `${JSON.stringify(profile, null, 2)}\n`);
  renameSync(tmp, path);
}

/**
 * The `timeline` event of a step from the agents' replies: each agent's events moved onto the
 * coordinator's axis (its offset removed), in ms from when the coordinator started the step.
 */
export function stepTimeline(step: number, originMs: number, replies: Message[], layout: Placement[], clocks: ClockEstimate[]): TimelineJobEvent | null {
  const events: TimelineEvent[] = [];
  for (const m of replies) {
    const rank = Number(m.header.rank);
    const recorded = (m.header.timeline as TimelineEvent[] | undefined) ?? [];
    events.push(...alignEvents(recorded, clocks[rank]?.offsetMs ?? 0, originMs));
  }
  if (events.length === 0) return null;
  events.sort((a, b) => a.startMs - b.startMs);
  const memory = replies.map((m) => {
    const rank = Number(m.header.rank);
    const peak = (m.header.memory as { peakStashed: number; peakStashedBytes: number } | undefined) ?? { peakStashed: 0, peakStashedBytes: 0 };
    return { rank, stage: layout[rank].stage, replica: layout[rank].replica, ...peak };
  });
  return { type: 'timeline', step, originMs, events, memory: memory.sort((a, b) => a.rank - b.rank) };
}
