import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { parseClusterSpec } from '../../engine/cluster/parseClusterSpec.js';
import { costOfPlan } from '../../engine/cost/costOfPlan.js';
import { keptBytesPerSample } from '../../engine/cost/deviceMemory.js';
import { stageFacts } from '../../engine/cost/stageFacts.js';
import type { ModelGraph } from '../../engine/model/graph.js';
import { zooModel } from '../../engine/model/zoo.js';
import { presetPlan } from '../../engine/plan/presets.js';
import { suggestPlans } from '../../engine/planner/suggestPlans.js';

const root = join(__dirname, '..', '..');
const dgx = parseClusterSpec(JSON.parse(readFileSync(join(root, 'examples/clusters/dgx-a100-2x8.json'), 'utf8')));

/** Bytes one sample leaves for the backward pass in the layers of `group`, at 16-bit (masks 1 byte). */
function keptBytes16(model: ModelGraph, group: string): number {
  const layers = model.layers.filter((l) => l.group === group);
  const values = layers.reduce((n, l) => n + l.kept.inputs + l.kept.internal, 0);
  const masks = layers.reduce((n, l) => n + l.kept.masks, 0);
  return keptBytesPerSample({ keptValues: values, keptMasks: masks }, 2);
}

describe('activation memory: what the backward pass keeps', () => {
  it("a BERT-large layer keeps Korthikanti et al.'s s·b·h·(34 + 5·a·s/h) bytes, less the attention dropout it lacks", () => {
    // Korthikanti et al. 2022, §4.1, per transformer layer at 16-bit with 1-byte dropout masks, b = 1:
    // attention 11sh + 5as² (of which the softmax dropout's mask as² and its output 2as²), MLP 19sh,
    // the two layer norms 4sh. The zoo's attention has no dropout on its scores: 3as² fewer.
    const [s, h, a] = [512, 1024, 16];
    const published = s * h * (34 + (5 * a * s) / h);
    expect(keptBytes16(zooModel('bert-large'), 'layer_0')).toBe(published - 3 * a * s * s);
  });

  it('a GPT-2 XL block (pre-LN, no dropout inside) keeps 32sh + 2as² bytes at 16-bit', () => {
    // The same terms without the two residual dropouts' masks (sh each) or the scores' dropout.
    const [s, h, a] = [1024, 1600, 25];
    expect(keptBytes16(zooModel('gpt2-xl'), 'block_0')).toBe(32 * s * h + 2 * a * s * s);
  });

  it("a stage keeps the sum of its layers' tensors, at float32 for tfjs (masks as float32 too)", () => {
    const model = zooModel('bert-base');
    const plan = presetPlan(model, 'pp1-dp1');
    const f = stageFacts(model, plan, 0);
    const values = model.layers.reduce((n, l) => n + l.kept.inputs + l.kept.internal, 0);
    const masks = model.layers.reduce((n, l) => n + l.kept.masks, 0);
    // Plus the softmax the loss's backward reads, one per model output.
    const outputs = model.outputs.reduce((n, id) => n + model.layers.find((l) => l.id === id)!.activationBytes / 4, 0);
    expect(f.keptValues).toBe(values + outputs);
    expect(f.keptMasks).toBe(masks);
    expect(keptBytesPerSample(f, 4)).toBe(4 * (values + outputs + masks));
  });

  it('gpt2-xl on 2 × 8 A100-40GB: the top plan fits by this accounting; 4 samples per micro-batch would not', () => {
    const model = zooModel('gpt2-xl');
    const { suggestions } = suggestPlans(model, dgx, { top: 1, globalBatch: 512 });
    const [top] = suggestions;
    const cost = costOfPlan(top.plan, model, dgx);
    expect(cost.fits).toBe(true);
    expect(Math.max(...top.predicted.peakMemoryBytes)).toBeLessThanOrEqual(40 * 2 ** 30);
    // Whatever it chose, each device holds at least the published activations of its samples in flight.
    const [s, h, a] = [1024, 1600, 25];
    const perSampleFp32 = 2 * (32 * s * h + 2 * a * s * s);
    const samples = top.plan.globalBatch / top.plan.microBatches / top.plan.stages[0].dataParallel;
    const layers = 48 / top.plan.stages.length / top.plan.stages[0].tensorParallel;
    expect(cost.devices[0].memory.activations).toBeGreaterThanOrEqual(perSampleFp32 * samples * layers * (top.plan.recompute ? 0 : 1));
    // The plan: data parallel over 16, 8 micro-batches of 4 samples, no recomputation.
    const dp16m8 = { ...presetPlan(model, 'pp1-dp16-m8', { globalBatch: 512 }), schedule: '1f1b' as const };
    expect(costOfPlan(dp16m8, model, dgx).fits).toBe(false);
  });
});
