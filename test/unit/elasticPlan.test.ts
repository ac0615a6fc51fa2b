import { describe, expect, it } from 'vitest';
import { zooModel } from '../../engine/model/zoo.js';
import { devicesPerReplica, planForDevices, proportionalVirtualNodes } from '../../engine/plan/elastic.js';
import { microBatchSize } from '../../engine/plan/placement.js';
import { presetPlan } from '../../engine/plan/presets.js';
import { validatePlan } from '../../engine/plan/validate.js';
import { localClusterSpec } from '../../engine/cluster/cluster.js';

const mlp = zooModel('mlp');

describe('elastic plans keep what is learnt and change only who runs it', () => {
  const base = { ...presetPlan(mlp, 'pp2-dp2'), virtualNodes: { total: 8 } };

  it('fits as many replicas as the devices allow, keeping V, the global batch and the micro-batch', () => {
    expect(devicesPerReplica(base)).toBe(2);
    for (const [devices, replicas, perReplica] of [
      [2, 1, [8]],
      [5, 2, [4, 4]],
      [6, 3, [3, 3, 2]],
      [8, 4, [2, 2, 2, 2]],
      [40, 8, [1, 1, 1, 1, 1, 1, 1, 1]],
    ] as const) {
      const plan = planForDevices(base, devices);
      expect(plan.stages.map((s) => s.dataParallel)).toEqual([replicas, replicas]);
      expect(plan.virtualNodes).toEqual({ total: 8, perReplica });
      expect(plan.globalBatch).toBe(base.globalBatch);
      expect(microBatchSize(plan)).toBe(microBatchSize(base));
      expect(validatePlan(plan, mlp, localClusterSpec(devices)).filter((d) => d.severity === 'error')).toEqual([]);
    }
  });

  it('refuses when not one replica fits', () => {
    expect(() => planForDevices(base, 1)).toThrow(/1 device\(s\) cannot hold one replica of the pipeline, which needs 2/);
  });

  it('gives faster replicas more virtual nodes, at least one each, adding up to V', () => {
    expect(proportionalVirtualNodes(8, [1, 1, 1, 1])).toEqual([2, 2, 2, 2]);
    expect(proportionalVirtualNodes(12, [2, 2, 1, 1])).toEqual([4, 4, 2, 2]);
    expect(proportionalVirtualNodes(8, [10, 1])).toEqual([7, 1]);
    expect(proportionalVirtualNodes(7, [1, 1, 1])).toEqual([3, 2, 2]);
    expect(() => proportionalVirtualNodes(2, [1, 1, 1])).toThrow(/at least one/);
    expect(() => proportionalVirtualNodes(4, [1, 0])).toThrow(/positive/);
    expect(planForDevices(base, 4, [3, 1]).virtualNodes).toEqual({ total: 8, perReplica: [6, 2] });
  });
});
