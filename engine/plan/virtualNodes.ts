import type { Plan } from './plan.js';

/** How many fixed slices (virtual nodes) the global batch is cut into; one per replica by default. */
export function virtualNodeTotal(plan: Plan): number {
  return plan.virtualNodes?.total ?? plan.stages[0].dataParallel;
}

/**
 * Virtual nodes each data-parallel replica of a stage runs, in replica order. Without an explicit
 * assignment the total is spread as evenly as possible, earlier replicas taking the remainder, so
 * every process derives the same assignment.
 */
export function virtualNodesPerReplica(plan: Plan, stage = 0): number[] {
  const replicas = plan.stages[stage].dataParallel;
  if (plan.virtualNodes?.perReplica) return plan.virtualNodes.perReplica;
  const total = plan.virtualNodes?.total ?? replicas;
  return Array.from({ length: replicas }, (_, r) => Math.floor(total / replicas) + (r < total % replicas ? 1 : 0));
}
