import { describe, expect, it } from 'vitest';
import { localClusterSpec } from '../../engine/cluster/cluster.js';
import { zooModel } from '../../engine/model/zoo.js';
import { executionSupport } from '../../engine/plan/executionSupport.js';
import { agentsNeeded, parsePlan } from '../../engine/plan/plan.js';
import { microBatchSize, placements, rankOf } from '../../engine/plan/placement.js';
import { balancedStages, presetPlan } from '../../engine/plan/presets.js';
import { validatePlan } from '../../engine/plan/validate.js';
import { virtualNodesPerReplica } from '../../engine/plan/virtualNodes.js';

const mlp = zooModel('mlp');

/** A plan as a version-1 document had it, before device groups, sharding and virtual nodes existed. */
const versionOnePlan = {
  version: 1,
  model: 'mlp',
  stages: [
    { layers: ['input', 'dense_1'], dataParallel: 2 },
    { layers: ['dense_2', 'logits'], dataParallel: 2 },
  ],
  globalBatch: 64,
  microBatches: 4,
  schedule: 'gpipe',
  optimizer: { kind: 'sgd', learningRate: 0.1 },
  seed: 1,
};

describe('plan presets', () => {
  it('pp2-dp2 has two stages of two replicas covering every layer once', () => {
    const plan = presetPlan(mlp, 'pp2-dp2');
    expect(plan.stages).toHaveLength(2);
    expect(plan.stages.map((s) => s.dataParallel)).toEqual([2, 2]);
    expect(plan.stages.flatMap((s) => s.layers)).toEqual(mlp.layers.map((l) => l.id));
    expect(plan.microBatches).toBe(4);
    expect(plan.schedule).toBe('gpipe');
    expect(validatePlan(plan, mlp, localClusterSpec(4))).toEqual([]);
    expect(executionSupport(plan)).toEqual([]);
  });

  it('balances stages by cost: the big first dense layer sits alone', () => {
    expect(balancedStages(mlp, 2)).toEqual([['input', 'dense_1'], ['dense_2', 'logits']]);
  });

  it('rejects unknown presets with the expected form', () => {
    expect(() => presetPlan(mlp, 'fast')).toThrow(/pp<stages>-dp<replicas>/);
  });
});

describe('plan schema', () => {
  it('a version-1 plan still parses, with defaults that keep its meaning', () => {
    const plan = parsePlan(versionOnePlan);
    expect(plan.stages.map((s) => [s.tensorParallel, s.devices])).toEqual([[1, undefined], [1, undefined]]);
    expect([plan.zero, plan.recompute, plan.sharding, plan.virtualNodes]).toEqual([0, false, {}, undefined]);
    expect(agentsNeeded(plan)).toBe(4);
    expect(microBatchSize(plan)).toBe(8);
    expect(validatePlan(plan, mlp, localClusterSpec(4))).toEqual([]);
  });

  it('parses device groups, tensor degree, SBP sharding and virtual nodes', () => {
    const plan = parsePlan({
      ...versionOnePlan,
      stages: [{ layers: ['input', 'dense_1', 'dense_2', 'logits'], dataParallel: 2, tensorParallel: 2, devices: [4, 5, 6, 7] }],
      sharding: { dense_1: { weight: 'S(1)' }, dense_2: { weight: 'S(0)', output: 'B' } },
      virtualNodes: { total: 8, perReplica: [5, 3] },
      zero: 1,
      schedule: '1f1b',
    });
    expect(plan.sharding).toEqual({ dense_1: { weight: 'S(1)' }, dense_2: { weight: 'S(0)', output: 'B' } });
    expect(agentsNeeded(plan)).toBe(4);
    expect(virtualNodesPerReplica(plan)).toEqual([5, 3]);
    expect(microBatchSize(plan)).toBe(2);
  });

  it('lists every schema problem with its path', () => {
    expect(() => parsePlan({ version: 1, model: 'mlp', stages: [], globalBatch: -1 })).toThrow(/stages[\s\S]*globalBatch/);
    expect(() => parsePlan({ ...versionOnePlan, sharding: { dense_1: { weight: 'P' } } })).toThrow(/sharding\.dense_1\.weight: Use "B" \(broadcast\) or "S\(k\)"/);
    expect(() => parsePlan({ ...versionOnePlan, sharding: { dense_1: { output: 'S(x)' } } })).toThrow(/sharding\.dense_1\.output/);
    expect(() => parsePlan({ ...versionOnePlan, virtualNodes: { total: 4, perReplica: [4, 0] } })).toThrow(/virtualNodes\.perReplica\.1/);
    expect(() => parsePlan({ ...versionOnePlan, stages: [{ layers: ['input'], dataParallel: 1, tensorParallel: 0, devices: [-1] }] })).toThrow(/stages\.0\.tensorParallel[\s\S]*stages\.0\.devices\.0/);
  });
});

describe('placements', () => {
  it('ranks are stage-major and run on the device with their own index by default', () => {
    expect(placements(presetPlan(mlp, 'pp2-dp2'))).toEqual([
      { rank: 0, stage: 0, replica: 0, shard: 0, device: 0 },
      { rank: 1, stage: 0, replica: 1, shard: 0, device: 1 },
      { rank: 2, stage: 1, replica: 0, shard: 0, device: 2 },
      { rank: 3, stage: 1, replica: 1, shard: 0, device: 3 },
    ]);
  });

  it('a tensor-parallel group is a run of ranks; device groups are replica-major', () => {
    const plan = presetPlan(mlp, 'pp2-dp2');
    plan.stages[0] = { ...plan.stages[0], tensorParallel: 2, devices: [8, 9, 10, 11] };
    const layout = placements(plan);
    expect(layout.slice(0, 4).map((p) => [p.replica, p.shard, p.device])).toEqual([[0, 0, 8], [0, 1, 9], [1, 0, 10], [1, 1, 11]]);
    expect(layout.slice(4).map((p) => [p.rank, p.stage, p.device])).toEqual([[4, 1, 4], [5, 1, 5]]);
    expect(rankOf(plan, 0, 1, 1)).toBe(3);
    expect(rankOf(plan, 1, 1)).toBe(5);
    expect(() => rankOf(plan, 1, 0, 1)).toThrow(/no shard 1 of replica 0 in stage 1/);
  });
});

describe('virtual nodes', () => {
  it('spread evenly when not assigned, earlier replicas taking the remainder', () => {
    const plan = { ...presetPlan(mlp, 'pp1-dp3'), virtualNodes: { total: 8 } };
    expect(virtualNodesPerReplica(plan)).toEqual([3, 3, 2]);
    expect(virtualNodesPerReplica(presetPlan(mlp, 'pp1-dp3'))).toEqual([1, 1, 1]);
  });
});
