import { describe, expect, it } from 'vitest';
import { planGroups } from '../../agents/comm/planGroups.js';
import type { Plan } from '../../engine/plan/plan.js';

/** Only the stage degrees matter to the groups; the rest of the plan is irrelevant here. */
function planWith(stages: Array<{ dataParallel: number; tensorParallel: number }>): Plan {
  return { stages } as unknown as Plan;
}

describe('process groups of a plan', () => {
  it('splits 2 stages × 2 replicas × 2 shards into data, tensor and pipeline groups', () => {
    const plan = planWith([
      { dataParallel: 2, tensorParallel: 2 },
      { dataParallel: 2, tensorParallel: 2 },
    ]);
    // Ranks are stage-major, then replica, then shard: stage 0 = 0..3, stage 1 = 4..7.
    expect(planGroups(plan, 0)).toEqual({ data: [0, 2], tensor: [0, 1], pipeline: [0, 4] });
    expect(planGroups(plan, 7)).toEqual({ data: [5, 7], tensor: [6, 7], pipeline: [3, 7] });
    // Every member of a group derives the same group.
    for (let r = 0; r < 8; r++) {
      const mine = planGroups(plan, r);
      for (const dim of ['data', 'tensor', 'pipeline'] as const) {
        for (const other of mine[dim]) expect(planGroups(plan, other)[dim]).toEqual(mine[dim]);
      }
    }
  });

  it('refuses a rank the plan does not place', () => {
    expect(() => planGroups(planWith([{ dataParallel: 1, tensorParallel: 1 }]), 3)).toThrow(/not in the plan/);
  });
});
