import { describe, expect, it } from 'vitest';
import { zooModel } from '../../engine/model/zoo.js';
import { parsePlan } from '../../engine/plan/plan.js';
import { placements } from '../../engine/plan/placement.js';
import { balancedStages, presetPlan } from '../../engine/plan/presets.js';
import { validatePlan } from '../../engine/plan/validate.js';

const mlp = zooModel('mlp');
const codes = (plan: ReturnType<typeof presetPlan>, agents?: number) => validatePlan(plan, mlp, agents).map((d) => d.code);

describe('plan presets', () => {
  it('pp2-dp2 has two stages of two replicas covering every layer once', () => {
    const plan = presetPlan(mlp, 'pp2-dp2');
    expect(plan.stages).toHaveLength(2);
    expect(plan.stages.map((s) => s.dataParallel)).toEqual([2, 2]);
    expect(plan.stages.flatMap((s) => s.layers)).toEqual(mlp.layers.map((l) => l.id));
    expect(plan.microBatches).toBe(4);
    expect(plan.schedule).toBe('gpipe');
    expect(validatePlan(plan, mlp, 4)).toEqual([]);
  });

  it('balances stages by cost: the big first dense layer sits alone', () => {
    expect(balancedStages(mlp, 2)).toEqual([['input', 'dense_1'], ['dense_2', 'logits']]);
  });

  it('ranks are stage-major', () => {
    expect(placements(presetPlan(mlp, 'pp2-dp2'))).toEqual([
      { rank: 0, stage: 0, replica: 0 },
      { rank: 1, stage: 0, replica: 1 },
      { rank: 2, stage: 1, replica: 0 },
      { rank: 3, stage: 1, replica: 1 },
    ]);
  });

  it('rejects unknown presets with the expected form', () => {
    expect(() => presetPlan(mlp, 'fast')).toThrow(/pp<stages>-dp<replicas>/);
  });
});

describe('validatePlan', () => {
  it('reports a layer in two stages and a layer in none', () => {
    const plan = presetPlan(mlp, 'pp2-dp1');
    plan.stages[1].layers = ['dense_1', 'logits'];
    expect(codes(plan)).toEqual(expect.arrayContaining(['layer-twice', 'layer-unassigned']));
  });

  it('reports unknown layers, bad order, indivisible batches and too few agents', () => {
    const plan = presetPlan(mlp, 'pp2-dp2', { globalBatch: 30 });
    plan.stages[0].layers = ['input', 'dense_2', 'ghost'];
    plan.stages[1].layers = ['dense_1', 'logits'];
    const found = codes(plan, 2);
    expect(found).toEqual(expect.arrayContaining(['unknown-layer', 'stage-order', 'batch-indivisible', 'too-few-agents']));
  });

  it('every diagnostic says where and how to fix it', () => {
    const plan = presetPlan(mlp, 'pp2-dp2', { globalBatch: 30 });
    plan.schedule = 'async';
    plan.zero = 2;
    plan.stages[1].dataParallel = 1;
    const diagnostics = validatePlan(plan, mlp, 1);
    expect(diagnostics.map((d) => d.code)).toEqual(expect.arrayContaining(['schedule-unsupported', 'zero-unsupported', 'unequal-data-parallel']));
    for (const d of diagnostics) {
      expect(d.hint.length).toBeGreaterThan(10);
      expect(Object.keys(d.where).length).toBeGreaterThan(0);
    }
  });

  it('parsePlan lists every schema problem with its path', () => {
    expect(() => parsePlan({ version: 1, model: 'mlp', stages: [], globalBatch: -1 })).toThrow(/stages[\s\S]*globalBatch/);
  });
});
