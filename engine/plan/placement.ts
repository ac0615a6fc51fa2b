import type { Plan } from './plan.js';

/** Where one agent sits in a plan: its pipeline stage and its data-parallel replica within that stage. */
export interface Placement {
  rank: number;
  stage: number;
  replica: number;
}

/**
 * Ranks are numbered stage-major: stage 0's replicas first, then stage 1's, and so on. The mapping is
 * a pure function of the plan so that every process derives the same one.
 */
export function placements(plan: Plan): Placement[] {
  const out: Placement[] = [];
  plan.stages.forEach((stage, s) => {
    for (let r = 0; r < stage.dataParallel; r++) out.push({ rank: out.length, stage: s, replica: r });
  });
  return out;
}

export function rankOf(plan: Plan, stage: number, replica: number): number {
  const found = placements(plan).find((p) => p.stage === stage && p.replica === replica);
  if (!found) throw new Error(`The plan has no replica ${replica} in stage ${stage}.`);
  return found.rank;
}

/** Samples one micro-batch of one replica holds. Validation guarantees the division is exact. */
export function microBatchSize(plan: Plan): number {
  return plan.globalBatch / (plan.stages[0].dataParallel * plan.microBatches);
}
