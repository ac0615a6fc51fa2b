import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { parseClusterSpec } from '../../engine/cluster/parseClusterSpec.js';
import type { ClusterSpec } from '../../engine/cluster/spec.js';
import { costOfPlan } from '../../engine/cost/costOfPlan.js';
import { totalParams } from '../../engine/model/graph.js';
import { importKerasModel } from '../../engine/model/import/importKeras.js';
import { zooModel } from '../../engine/model/zoo.js';
import { presetPlan } from '../../engine/plan/presets.js';
import { suggestPlans } from '../../engine/planner/suggestPlans.js';
import { tf, twoInTwoOut } from '../support/userModels.js';

const root = join(__dirname, '..', '..');
const whale = parseClusterSpec(JSON.parse(readFileSync(join(root, 'examples/clusters/whale-64xv100.json'), 'utf8')));

function oneHost(n: number, preset: string): ClusterSpec {
  return parseClusterSpec({ name: `${n}-${preset}`, hosts: [{ name: 'h0', devices: [{ preset, count: n }] }], links: { intraHost: { alpha: 5e-6, beta: 1.3e11 } } });
}

describe('plans an expert would sign', () => {
  it('a model of under a thousand weights on 64 V100s runs on one device, not a pipeline of 32 micro-batches', async () => {
    await tf.setBackend('cpu');
    const model = importKerasModel({ modelTopology: twoInTwoOut().toJSON(null, false) }).graph;
    expect(totalParams(model)).toBeLessThan(1000);
    const { suggestions } = suggestPlans(model, whale, { top: 3 });
    const [top] = suggestions;
    expect(top.plan.stages).toHaveLength(1);
    expect(top.plan.stages[0].devices).toHaveLength(1);
    expect(top.predicted.bubbleFraction).toBe(0);
    expect(top.rationale).toMatch(/^one device of 64/);
    // Every device past the first adds more fixed cost than the compute it takes over.
    const everyDevice = costOfPlan(presetPlan(model, 'pp1-dp64', { globalBatch: top.plan.globalBatch }), model, whale);
    const pipeline = costOfPlan(presetPlan(model, 'pp4-dp16-m32', { globalBatch: top.plan.globalBatch }), model, whale);
    expect(top.predicted.stepTimeMs).toBeLessThan(everyDevice.stepMs);
    expect(everyDevice.stepMs).toBeLessThan(pipeline.stepMs);
  });

  it('recomputation is proposed where it is what fits: bert-large on 8 × 16 GB, at most 4 micro-batches', () => {
    const model = zooModel('bert-large');
    const spec = oneHost(8, 'v100-16gb');
    const options = { top: 3, globalBatch: 256, maxMicroBatches: 4 };
    const fast = suggestPlans(model, spec, options);
    const recomputing = fast.suggestions.filter((s) => s.plan.recompute);
    expect(recomputing.length).toBeGreaterThan(0);
    for (const s of recomputing) {
      expect(costOfPlan(s.plan, model, spec).fits).toBe(true);
      expect(costOfPlan({ ...s.plan, recompute: false }, model, spec).fits).toBe(false);
      expect(s.rationale).toMatch(/recomputes/);
    }
    const full = suggestPlans(model, spec, { ...options, top: 1, exhaustive: true });
    expect(fast.suggestions[0].predicted.stepTimeMs).toBeLessThanOrEqual(1.03 * full.suggestions[0].predicted.stepTimeMs);
  });

  it('recomputation costs one more forward pass', () => {
    const model = zooModel('bert-base');
    const plan = presetPlan(model, 'pp2-dp1-m4', { globalBatch: 16 });
    const plain = costOfPlan(plan, model, oneHost(2, 'v100-32gb'));
    const again = costOfPlan({ ...plan, recompute: true }, model, oneHost(2, 'v100-32gb'));
    plain.stages.forEach((st, s) => expect(again.stages[s].backwardMs).toBeCloseTo(st.backwardMs + st.forwardMs, 9));
    expect(again.devices[0].memory.activations).toBeLessThan(plain.devices[0].memory.activations);
  });
});

describe('the breakdown keeps bubble and fixed overhead apart', () => {
  const model = zooModel('mlp');
  const spec = oneHost(2, 'v100-32gb');
  const profile = { stepOverheadMs: 7 };

  it('one stage: no bubble; the calibration remainder is fixed overhead; the parts add up to the step', () => {
    const cost = costOfPlan(presetPlan(model, 'pp1-dp2', { globalBatch: 64 }), model, spec, { profile });
    const { computeMs, exposedCommMs, bubbleMs, fixedOverheadMs } = cost.breakdown;
    expect(bubbleMs).toBe(0);
    expect(fixedOverheadMs).toBe(7);
    expect(computeMs + exposedCommMs + bubbleMs + fixedOverheadMs).toBeCloseTo(cost.stepMs, 9);
  });

  it('a pipeline: its bubble is the idle time of the schedule, apart from the fixed overhead', () => {
    const cost = costOfPlan(presetPlan(model, 'pp2-dp1-m2', { globalBatch: 64 }), model, spec, { profile });
    const { computeMs, exposedCommMs, bubbleMs, fixedOverheadMs } = cost.breakdown;
    expect(bubbleMs).toBeGreaterThan(0);
    expect(fixedOverheadMs).toBe(7);
    expect(computeMs + exposedCommMs + bubbleMs + fixedOverheadMs).toBeCloseTo(cost.stepMs, 9);
  });
});
