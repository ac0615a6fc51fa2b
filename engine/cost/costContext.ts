import type { ClusterSpec } from '../cluster/spec.js';
import { linkBetween } from '../cluster/topology.js';
import type { ModelGraph } from '../model/graph.js';
import type { Placement } from '../plan/placement.js';
import type { Plan } from '../plan/plan.js';
import { measuredLink } from './deviceSpeed.js';
import { DEFAULT_OVERHEADS } from './runtimeOverheads.js';
import type { CostOptions } from './planCost.js';
import type { StageFacts } from './stageFacts.js';

export interface CostContext {
  plan: Plan;
  model: ModelGraph;
  cluster: ClusterSpec;
  options: CostOptions;
  facts: StageFacts[];
  layout: Placement[];
  microBatch: number;
  /** Bytes per element relative to the fp32 byte counts of the model facts. */
  scale: number;
  bytesPerElement: number;
}

export function link(ctx: CostContext, a: number, b: number): { alpha: number; beta: number } {
  const measured = measuredLink(ctx.options, a, b);
  if (measured) return measured;
  // A datasheet link's latency is the wire's; the runtime's own cost of a message comes on top.
  const wire = linkBetween(ctx.cluster, a, b);
  const perMessageMs = ctx.options.overheads?.perMessageMs ?? DEFAULT_OVERHEADS.perMessageMs;
  return { alpha: wire.alpha + perMessageMs / 1000, beta: wire.beta };
}

/** The slowest link of a ring over these devices (the ring moves at its weakest hop). */
export function ringLink(ctx: CostContext, devices: number[]): { alpha: number; beta: number } {
  let alpha = 0;
  let beta = Infinity;
  for (let i = 0; i < devices.length; i++) {
    const l = link(ctx, devices[i], devices[(i + 1) % devices.length]);
    alpha = Math.max(alpha, l.alpha);
    beta = Math.min(beta, l.beta);
  }
  return { alpha, beta };
}

export function devicesOfReplica(ctx: CostContext, stage: number, replica: number): number[] {
  const degree = ctx.plan.stages[stage].dataParallel;
  return ctx.layout.filter((p) => p.stage === stage && p.replica === replica % degree).map((p) => p.device);
}

/** Devices holding shard `shard` of every replica of a stage: one data-parallel all-reduce ring. */
export function dataParallelRing(ctx: CostContext, stage: number, shard: number): number[] {
  return ctx.layout.filter((p) => p.stage === stage && p.shard === shard).map((p) => p.device);
}

