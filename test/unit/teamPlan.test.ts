import { describe, expect, it } from 'vitest';
import { zooModel } from '../../engine/model/zoo.js';
import { microBatchSize } from '../../engine/plan/placement.js';
import { agentsNeeded, type Plan } from '../../engine/plan/plan.js';
import { presetPlan } from '../../engine/plan/presets.js';
import { planTeam } from '../../engine/plan/teamPlan.js';
import { validatePlan } from '../../engine/plan/validate.js';
import { executionSupport } from '../../engine/plan/executionSupport.js';
import { virtualNodeTotal } from '../../engine/plan/virtualNodes.js';
import { summarizeJob } from '../../engine/node/commands/jobs.js';
import type { DeployRecord } from '../../engine/node/jobs/deployRecord.js';

const mlp = zooModel('mlp');
const shape = (p: Plan) => p.stages.map((s) => `${s.layers.length}L×${s.dataParallel}`).join(' ');

describe('planTeam: a plan for every live agent, keeping the batch and the virtual nodes', () => {
  it('uses every agent whenever some layout of stages × replicas (≤ V) fits them, for any team size', () => {
    for (const [preset, total] of [['pp2-dp2', 4], ['pp2-dp1', 4], ['pp1-dp3', 8], ['pp2-dp2', 8]] as const) {
      const base: Plan = { ...presetPlan(mlp, preset), virtualNodes: { total } };
      for (let agents = 1; agents <= 8; agents++) {
        const { plan, waitingReason } = planTeam(base, mlp, agents);
        const fits = [1, 2, 3, 4].some((stages) => agents % stages === 0 && agents / stages <= total);
        expect(agentsNeeded(plan), `${preset} V=${total} on ${agents}`).toBe(fits ? agents : agentsNeeded(plan));
        expect(waitingReason === null, `${preset} V=${total} on ${agents}`).toBe(fits);
        expect(virtualNodeTotal(plan)).toBe(total);
        expect(plan.globalBatch).toBe(base.globalBatch);
        expect(plan.optimizer).toEqual(base.optimizer);
        expect(microBatchSize(plan)).toBe(microBatchSize(base));
        expect([...validatePlan(plan, mlp), ...executionSupport(plan, mlp)].filter((d) => d.severity === 'error')).toEqual([]);
      }
    }
  });

  it('keeps the job\'s own stages when they divide the team, and re-cuts them when they do not', () => {
    const base: Plan = { ...presetPlan(mlp, 'pp2-dp2'), virtualNodes: { total: 4 } };
    expect(shape(planTeam(base, mlp, 4).plan)).toBe(shape(base));
    expect(planTeam(base, mlp, 6).plan.stages.map((s) => s.layers)).toEqual(base.stages.map((s) => s.layers));
    // Three survivors of pp2-dp2: three stages, or three replicas of one; both use everyone.
    expect(agentsNeeded(planTeam(base, mlp, 3).plan)).toBe(3);
  });

  it('says why agents wait when no layout uses them all', () => {
    const base: Plan = { ...presetPlan(mlp, 'pp2-dp2'), virtualNodes: { total: 2 } };
    const { plan, waitingReason } = planTeam(base, mlp, 5);
    expect(agentsNeeded(plan)).toBe(4);
    expect(waitingReason).toMatch(/no layout of the job uses all 5 agents .*at most 4, the layers of "mlp".*at most 2, one per virtual node .* so 4 train and 1 wait.*virtualNodes\.total/);
  });
});

describe('shoal jobs counts agents training, waiting and lost', () => {
  const record = { jobId: 'job-x', cluster: 'c', model: 'mlp', createdAt: 't', head: 'h1', processes: [{ name: 'coordinator' }, { name: 'agent-0' }, { name: 'agent-1' }, { name: 'agent-2' }] } as unknown as DeployRecord;
  const states = [{ target: 'h1', ok: true, present: true, processes: [{ name: 'coordinator', alive: true }, { name: 'agent-0', alive: true }, { name: 'agent-1', alive: false }, { name: 'agent-2', alive: true }] }] as never;
  it('from the newest generation, apart from the processes alive', () => {
    const membership = { type: 'membership' as const, generation: 2, step: 5, reason: 'lost rank 1', agents: [0, 1].map((rank) => ({ rank, stage: 0, replica: rank, shard: 0, host: 'h1', pid: rank, virtualNodes: 1 })), waiting: [], lost: 1 };
    const s = summarizeJob(record, states, membership);
    expect(s.detail).toBe('2 training, 0 waiting, 1 lost (generation 2); 2 of 3 agent processes alive');
    expect(s.agents).toEqual({ training: 2, waiting: 0, lost: 1 });
    expect(summarizeJob(record, states).detail).toBe('2 of 3 agent processes alive');
  });
});
