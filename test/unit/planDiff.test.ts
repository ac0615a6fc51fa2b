import { describe, expect, it } from 'vitest';
import { zooModel } from '../../engine/model/zoo.js';
import { planDiff } from '../../engine/plan/planDiff.js';
import { presetPlan } from '../../engine/plan/presets.js';

describe('planDiff', () => {
  it('is empty for equal plans', () => {
    const plan = presetPlan(zooModel('mlp'), 'pp2-dp2');
    expect(planDiff(plan, structuredClone(plan))).toEqual([]);
  });

  it('names the stage and field that differ, with both values', () => {
    const model = zooModel('mlp');
    const diff = planDiff(presetPlan(model, 'pp2-dp1'), presetPlan(model, 'pp2-dp2-m8'));
    expect(diff).toContainEqual({ path: 'stages[0].dataParallel', left: '1', right: '2' });
    expect(diff).toContainEqual({ path: 'microBatches', left: expect.any(String), right: '8' });
    expect(diff.every((d) => !d.path.startsWith('model'))).toBe(true);
  });

  it('shows a missing stage and moved layers as values', () => {
    const model = zooModel('mlp');
    const diff = planDiff(presetPlan(model, 'pp1-dp1'), presetPlan(model, 'pp2-dp1'));
    expect(diff.find((d) => d.path === 'stages[0].layers')).toMatchObject({ left: 'input, dense_1, dense_2, logits' });
    expect(diff.find((d) => d.path === 'stages[1]')).toMatchObject({ left: '—' });
  });
});
