import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { parseClusterSpec } from '../../engine/cluster/parseClusterSpec.js';
import { costOfPlan } from '../../engine/cost/costOfPlan.js';
import { NO_OVERHEADS } from '../../engine/cost/runtimeOverheads.js';
import { sequentialGraph } from '../../engine/model/sequential.js';
import { zooModel } from '../../engine/model/zoo.js';
import type { Plan } from '../../engine/plan/plan.js';
import { presetPlan } from '../../engine/plan/presets.js';
import { validatePlan } from '../../engine/plan/validate.js';

const root = join(__dirname, '..', '..');
const whale = parseClusterSpec(JSON.parse(readFileSync(join(root, 'examples/clusters/whale-64xv100.json'), 'utf8')));

/** n identical devices on one host with a link so fast that transfers cost nothing measurable. */
function idealCluster(n: number, memoryBytes = 16 * 2 ** 30) {
  return parseClusterSpec({
    name: 'ideal',
    hosts: [{ name: 'h', devices: [{ name: 'dev', memoryBytes, flops: { fp32: 1e12 }, count: n }], intraLink: { alpha: 0, beta: 1e18 } }],
  });
}

/** Eight identical 1024-wide dense layers: stages of two layers each are exactly uniform. */
const uniform = sequentialGraph(
  'uniform',
  'eight equal dense layers',
  [1024],
  Array.from({ length: 8 }, (_, i) => ({ id: `d${i}`, spec: { kind: 'dense' as const, units: 1024, activation: 'relu' as const } })),
  1024,
);

function pipelinePlan(p: number, m: number, schedule: Plan['schedule'], extra: Partial<Plan> = {}): Plan {
  const ids = uniform.layers.map((l) => l.id).filter((id) => id !== 'input');
  const per = ids.length / p;
  return {
    ...presetPlan(uniform, `pp${p}-dp1`, { microBatches: m, globalBatch: 8 * m }),
    // The input layer has no cost; keep it with the first stage so the others are identical.
    stages: Array.from({ length: p }, (_, s) => ({ layers: [...(s === 0 ? ['input'] : []), ...ids.slice(s * per, (s + 1) * per)], dataParallel: 1, tensorParallel: 1 })),
    schedule,
    ...extra,
  };
}

describe('costOfPlan on uniform stages', () => {
  for (const [p, m] of [[2, 4], [4, 4], [4, 8], [4, 16]]) {
    for (const schedule of ['gpipe', '1f1b'] as const) {
      it(`${schedule} p=${p} m=${m}: bubble fraction (p−1)/(m+p−1)`, () => {
        // The schedule's own bubble: no message or per-call costs to tilt the stages.
        const cost = costOfPlan(pipelinePlan(p, m, schedule), uniform, idealCluster(p), { overheads: NO_OVERHEADS });
        expect(cost.bubbleFraction).toBeCloseTo((p - 1) / (m + p - 1), 6);
      });
    }
    it(`async p=${p} m=${m}: no bubble`, () => {
      expect(costOfPlan(pipelinePlan(p, m, 'async'), uniform, idealCluster(p)).bubbleFraction).toBeCloseTo(0, 9);
    });
  }

  it('1F1B holds fewer activations than GPipe once m > p', () => {
    const gpipe = costOfPlan(pipelinePlan(4, 16, 'gpipe'), uniform, idealCluster(4));
    const oneF = costOfPlan(pipelinePlan(4, 16, '1f1b'), uniform, idealCluster(4));
    expect(oneF.devices[0].memory.activations).toBeCloseTo(gpipe.devices[0].memory.activations * (4 / 16), 6);
  });

  it('prefers a measured profile over datasheet FLOP/s', () => {
    const plan = pipelinePlan(2, 4, 'gpipe');
    const profile = { layers: Object.fromEntries(uniform.layers.map((l) => [l.id, { device: 'dev', forwardMsPerSample: 0.5, backwardMsPerSample: 1 }])) };
    const cost = costOfPlan(plan, uniform, idealCluster(2), { profile });
    // Stage 0 holds the input and d0..d3: 5 layers × 0.5 ms × 8 samples per micro-batch.
    expect(cost.stages[0].forwardMs).toBeCloseTo(5 * 0.5 * 8, 9);
    expect(cost.stages[1].backwardMs).toBeCloseTo(4 * 1 * 8, 9);
  });
});

describe('costOfPlan memory', () => {
  const psiPlan = (zero: number): Plan => ({ ...presetPlan(uniform, 'pp1-dp8'), zero });
  const psi = uniform.layers.reduce((s, l) => s + l.params, 0);
  const state = (zero: number) => {
    const m = costOfPlan(psiPlan(zero), uniform, idealCluster(8), { precision: 'mixed' }).devices[0].memory;
    return m.parameters + m.gradients + m.optimizer;
  };
  it('reproduces ZeRO: 16Ψ → 4Ψ+12Ψ/N → 2Ψ+14Ψ/N → 16Ψ/N for mixed-precision Adam', () => {
    expect(state(0)).toBeCloseTo(16 * psi, 0);
    expect(state(1)).toBeCloseTo(4 * psi + (12 * psi) / 8, 0);
    expect(state(2)).toBeCloseTo(2 * psi + (14 * psi) / 8, 0);
    expect(state(3)).toBeCloseTo((16 * psi) / 8, 0);
  });

  it('flags a device that runs out of memory', () => {
    const cost = costOfPlan(presetPlan(uniform, 'pp1-dp2'), uniform, idealCluster(2, 64 * 2 ** 20));
    expect(cost.fits).toBe(false);
    expect(cost.devices[0].memory.total).toBeGreaterThan(cost.devices[0].capacityBytes);
  });
});

describe('costOfPlan communication', () => {
  it('data parallel moves 2(n−1)/n of the gradients per ring member', () => {
    const plan = presetPlan(uniform, 'pp1-dp4');
    const cost = costOfPlan(plan, uniform, idealCluster(4));
    const gradients = uniform.layers.reduce((s, l) => s + l.params, 0) * 4;
    expect(cost.commBytesPerStep).toBeCloseTo(4 * ((2 * 3) / 4) * gradients, 0);
  });

  it("resnet50-100k on Whale's cluster: class-dimension sharding cuts traffic against pure data parallel", () => {
    const model = zooModel('resnet50-100k');
    const dp = presetPlan(model, 'pp1-dp64', { globalBatch: 64 * 32 });
    expect(validatePlan(dp, model, whale).filter((d) => d.severity === 'error')).toEqual([]);
    const classifier = model.outputs[0];
    // 8 replicas × 8-way tensor parallel inside each host; only the classifier is split over classes.
    const sharded: Plan = { ...dp, stages: [{ ...dp.stages[0], dataParallel: 8, tensorParallel: 8 }], sharding: { [classifier]: { weight: 'S(1)' } } };
    expect(validatePlan(sharded, model, whale).filter((d) => d.severity === 'error')).toEqual([]);
    const a = costOfPlan(dp, model, whale);
    const b = costOfPlan(sharded, model, whale);
    expect(b.commBytesPerStep).toBeLessThan(a.commBytesPerStep);
    expect(b.stepMs).toBeLessThan(a.stepMs);
    expect(b.devices[0].memory.parameters).toBeLessThan(a.devices[0].memory.parameters);
  });

  it('prices the bundled mlp on the local cluster it trains on', () => {
    const local = parseClusterSpec(JSON.parse(readFileSync(join(root, 'examples/clusters/local-4.json'), 'utf8')));
    const cost = costOfPlan(presetPlan(zooModel('mlp'), 'pp2-dp2'), zooModel('mlp'), local);
    expect(cost.fits).toBe(true);
    expect(cost.stepMs).toBeGreaterThan(0);
    expect(cost.timeline.filter((e) => e.kind === 'forward')).toHaveLength(2 * 4);
    expect(cost.links.length).toBeGreaterThan(0);
  });
});
