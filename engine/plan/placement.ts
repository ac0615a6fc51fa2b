import type { Plan } from './plan.js';
import { virtualNodeTotal } from './virtualNodes.js';

/**
 * Where one agent sits in a plan: its pipeline stage, its data-parallel replica within that stage,
 * its shard within the replica's tensor-parallel group, and the cluster device it runs on.
 */
export interface Placement {
  rank: number;
  stage: number;
  replica: number;
  shard: number;
  device: number;
}

/**
 * Ranks are numbered stage-major, then replica, then shard, so that a tensor-parallel group is a run
 * of consecutive ranks (and, with devices assigned in rank order, of neighbouring devices on one
 * host). A stage without an explicit device group runs rank i on device i. The mapping is a pure
 * function of the plan so that every process derives the same one.
 */
export function placements(plan: Plan): Placement[] {
  const out: Placement[] = [];
  plan.stages.forEach((stage, s) => {
    for (let r = 0; r < stage.dataParallel; r++) {
      for (let t = 0; t < stage.tensorParallel; t++) {
        const rank = out.length;
        out.push({ rank, stage: s, replica: r, shard: t, device: stage.devices?.[r * stage.tensorParallel + t] ?? rank });
      }
    }
  });
  return out;
}

export function rankOf(plan: Plan, stage: number, replica: number, shard = 0): number {
  const found = placements(plan).find((p) => p.stage === stage && p.replica === replica && p.shard === shard);
  if (!found) throw new Error(`The plan has no shard ${shard} of replica ${replica} in stage ${stage}.`);
  return found.rank;
}

/** Samples in one micro-batch: a virtual node's slice of the global batch, cut into micro-batches. Validation guarantees the division is exact. */
export function microBatchSize(plan: Plan): number {
  return plan.globalBatch / (virtualNodeTotal(plan) * plan.microBatches);
}
