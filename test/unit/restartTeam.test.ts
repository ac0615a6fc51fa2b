import { describe, expect, it } from 'vitest';
import { teamAfterRestart } from '../../engine/plan/restartPolicy.js';
import { zooModel } from '../../engine/model/zoo.js';
import { agentsNeeded, type Plan } from '../../engine/plan/plan.js';
import { presetPlan } from '../../engine/plan/presets.js';
import type { JobEvent } from '../../engine/protocol/events.js';

const model = zooModel('mlp');
const plan: Plan = { ...presetPlan(model, 'pp2-dp1'), virtualNodes: { total: 4 } };
const membership = (agents: number, generation: number): JobEvent => ({
  type: 'membership',
  generation,
  step: generation * 10,
  reason: generation === 1 ? 'start' : 'resize: +2',
  agents: Array.from({ length: agents }, (_, rank) => ({ rank, stage: rank % 2, replica: rank >> 1, shard: 0, host: 'h', pid: 100 + rank, virtualNodes: 2 })),
});

describe('a restarted deployed coordinator waits for the agents the job last had', () => {
  it('after a resize to 4 agents: 4, under the plan re-planned for 4 (two replicas of the two stages)', () => {
    const team = teamAfterRestart(plan, model, 2, [membership(2, 1), { type: 'step', step: 3, epoch: 0, loss: 1, samplesPerSec: 1, stepMs: 1, elapsedMs: 1 }, membership(4, 2)]);
    expect(team?.agents).toBe(4);
    expect(agentsNeeded(team!.plan)).toBe(4);
    expect(team!.plan.stages.map((s) => s.dataParallel)).toEqual([2, 2]);
    expect(team!.plan.virtualNodes?.total).toBe(4);
  });

  it('no resize (or none recorded yet): the configured agents and plan', () => {
    expect(teamAfterRestart(plan, model, 2, [membership(2, 1)])).toBeNull();
    expect(teamAfterRestart(plan, model, 2, [])).toBeNull();
  });
});
