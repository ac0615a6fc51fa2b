import { mkdirSync, renameSync, writeFileSync } from 'node:fs';
import { dirname } from 'node:path';
import { microBatchSize, type Placement } from '../../engine/plan/placement.js';
import { alignEvents, clockOffset, type ClockSample } from '../../engine/protocol/clockAlign.js';
import type { TimelineJobEvent } from '../../engine/protocol/events.js';
import type { AllReduceMeasurement, JobProfile, LayerTiming, LinkMeasurement } from '../../engine/protocol/profile.js';
import type { TimelineEvent } from '../../engine/protocol/timeline.js';
import type { AgentRequestOf } from '../../engine/protocol/agentRequests.js';
import type { ReplyTo } from '../../engine/protocol/agentReplies.js';
import type { Message } from '../../engine/wire/frame.js';
import { clockMs } from '../runtime/timelineRecorder.js';
import type { TrainingContext } from './trainingRun.js';

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
  for (let round = 0; round < rounds; round++) {
    const sentMs = clockMs();
    for (const m of await ctx.ask({ type: 'clock' })) samples[m.header.rank].push({ sentMs, agentMs: m.header.agentMs, receivedMs: m.header.receivedMs ?? clockMs() });
  }
  return samples.map((s) => clockOffset(s));
}

export interface ProfileRequestOptions {
  batches?: number[];
  repeats?: number;
  synthetic: boolean;
  /**
   * Calibration-grade profile (benchmarks, a planning run): every agent times every layer of the
   * model, alone and then all at the same moment (how much agents sharing a host slow each other
   * down), and the gradient all-reduce is timed at several bucket sizes.
   */
  full?: boolean;
  /** Bucket sizes (bytes) to time the all-reduce at; default: 256 KB–16 MB when full, 1 and 4 MB when a stage is data-parallel. */
  allReduceBytes?: number[];
}

/**
 * Ask the agents to profile their stages and links; assemble profile.json's content. Layers are timed
 * one agent at a time (the others wait), so that agents sharing a host's cores do not slow each
 * other's timings down; a full profile adds a round with every agent timing at once. Links and
 * all-reduces are measured last, by every agent together.
 */
export async function collectProfile(ctx: TrainingContext, layout: Placement[], clocks: ClockEstimate[], options: ProfileRequestOptions): Promise<JobProfile> {
  const { plan, active } = ctx;
  const b = microBatchSize(plan);
  const batches = options.batches ?? [...new Set([Math.max(1, Math.floor(b / 4)), b, Math.max(b, Math.min(plan.globalBatch, 4 * b))])];
  const repeats = options.repeats ?? 3;
  const scope = options.full ? 'model' : 'stage';
  const dataParallel = plan.stages.some((s) => s.dataParallel > 1);
  const allReduceBytes = options.allReduceBytes ?? (options.full ? [256 << 10, 1 << 20, 4 << 20, 16 << 20] : dataParallel ? [1 << 20, 4 << 20] : []);
  const round = async (request: Omit<AgentRequestOf<'profile'>, 'type' | 'requestId'>) => {
    const replies = await ctx.ask({ type: 'profile', batches, repeats, ...request });
    return new Map(replies.map((m) => [m.header.rank, m.header]));
  };
  const rounds: Array<Map<number, ReplyTo<'profile'>>> = [];
  for (let turn = 0; turn < active.length; turn++) rounds.push(await round({ layers: scope, links: false, turn, allReduceBytes }));
  if (options.full && active.length > 1) rounds.push(await round({ layers: 'model', links: false, concurrent: active.length }));
  rounds.push(await round({ layers: 'none', links: true, allReduceBytes }));

  const layers: LayerTiming[] = [];
  const links: LinkMeasurement[] = [];
  const allReduce: AllReduceMeasurement[] = [];
  for (const replies of rounds) {
    for (const h of replies.values()) {
      layers.push(...h.layers);
      links.push(...h.links);
      allReduce.push(...h.allReduce);
    }
  }
  const agents = active.map((agent, rank) => {
    // The optimizer is timed in the agent's own (solo) turn.
    const h = rounds[rank].get(rank)!;
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
  return {
    version: 1,
    model: plan.model,
    createdAt: new Date().toISOString(),
    executor: { recomputeForward: plan.recompute },
    agents,
    layers,
    links,
    ...(allReduce.length ? { allReduce } : {}),
  };
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
