import { describe, expect, it } from 'vitest';
import { localClusterSpec } from '../../engine/cluster/cluster.js';
import { calibrate, fitPerCall } from '../../engine/cost/calibrate.js';
import { costOfPlan } from '../../engine/cost/costOfPlan.js';
import { zooModel } from '../../engine/model/zoo.js';
import { presetPlan } from '../../engine/plan/presets.js';
import { JobProfileSchema, type JobProfile, type LayerTiming } from '../../engine/protocol/profile.js';

const model = zooModel('mlp');
const cluster = localClusterSpec(4);
const device = cluster.devices[0].model;

/** A profile as two agents (stage 0 on device 0, stage 1 on device 1) would report it: 0.5 ms per call + 0.01 ms per sample forward. */
function syntheticProfile(): JobProfile {
  const layers: LayerTiming[] = [];
  const stageOf = (i: number) => (i < 2 ? 0 : 1);
  model.layers.forEach((l, i) => {
    for (const batch of [4, 16, 64]) {
      const forwardMs = l.spec.kind === 'input' ? 0 : 0.5 + 0.01 * batch;
      const backwardMs = l.spec.kind === 'input' ? 0 : 1 + 0.02 * batch;
      const rank = stageOf(i);
      layers.push({ id: l.id, rank, device: rank, batch, forwardMs, backwardMs, forwardMsPerSample: forwardMs / batch, backwardMsPerSample: backwardMs / batch, forwardFlops: l.forwardFlops, backwardFlops: l.backwardFlops });
    }
  });
  const agent = (rank: number) => ({ rank, stage: rank, replica: 0, device: rank, host: `local-${rank}`, backend: 'wasm', clockOffsetMs: 0, clockRttMs: 0.1, optimizerMsPerParam: 1e-5, optimizerMsPerTensor: 0.05 });
  return JobProfileSchema.parse({
    version: 1,
    model: 'mlp',
    createdAt: new Date(0).toISOString(),
    executor: { recomputeForward: false },
    agents: [agent(0), agent(1)],
    layers,
    links: [{ from: 0, to: 1, fromDevice: 0, toDevice: 1, alpha: 1e-4, beta: 1e9, rttMs: 0.2 }],
  });
}

describe('calibrate', () => {
  it('fits per-call and per-sample cost, and falls back to a line through the origin', () => {
    const fit = fitPerCall([
      { batch: 4, ms: 0.54 },
      { batch: 64, ms: 1.14 },
    ]);
    expect(fit.perCall).toBeCloseTo(0.5, 9);
    expect(fit.perSample).toBeCloseTo(0.01, 9);
    expect(fitPerCall([{ batch: 8, ms: 4 }])).toEqual({ perCall: 0, perSample: 0.5 });
    // Timing noise that makes bigger batches cheaper must not produce a negative per-sample cost.
    expect(fitPerCall([{ batch: 4, ms: 2 }, { batch: 8, ms: 1.5 }]).perSample).toBe(0);
  });

  it('turns profile.json into per-layer times, device FLOP/s, links and optimizer cost', () => {
    const profile = calibrate(syntheticProfile(), cluster);
    expect(Object.keys(profile.layers!).sort()).toEqual(model.layers.map((l) => l.id).sort());
    const dense = profile.layers!.dense_1;
    expect(dense.device).toBe(device);
    expect(dense.forwardMsPerCall).toBeCloseTo(0.5, 9);
    expect(dense.forwardMsPerSample).toBeCloseTo(0.01, 9);
    expect(dense.backwardMsPerSample).toBeCloseTo(0.02, 9);
    expect(profile.deviceFlops![0]).toBeGreaterThan(0);
    expect(profile.deviceFlops![1]).toBeGreaterThan(0);
    expect(profile.links!['0-1']).toEqual({ alpha: 1e-4, beta: 1e9 });
    // Same host: the pairs never measured get the measured loopback link.
    expect(profile.links!['2-3']).toEqual({ alpha: 1e-4, beta: 1e9 });
    expect(profile.optimizerMsPerParam![device]).toBeCloseTo(1e-5, 12);
    expect(profile.optimizerMsPerTensor![device]).toBeCloseTo(0.05, 12);
    expect(profile.recomputeForward).toBe(false);
  });

  it('lets costOfPlan predict from the measurements', () => {
    const profile = calibrate(syntheticProfile(), cluster);
    const plan = presetPlan(model, 'pp2-dp1', { microBatches: 4 });
    const cost = costOfPlan(plan, model, cluster, { profile });
    const b = 16;
    const stageLayers = plan.stages.map((s) => s.layers.filter((id) => model.layers.find((l) => l.id === id)!.spec.kind !== 'input').length);
    const perLayerF = 0.5 + 0.01 * b;
    const perLayerB = 1 + 0.02 * b;
    expect(cost.stages[0].forwardMs).toBeCloseTo(stageLayers[0] * perLayerF, 9);
    expect(cost.stages[0].backwardMs).toBeCloseTo(stageLayers[0] * perLayerB, 9);
    expect(cost.stages[1].backwardMs).toBeCloseTo(stageLayers[1] * perLayerB, 9);
    // A plan that recomputes pays the forward again in every backward.
    const recomputed = costOfPlan({ ...plan, recompute: true }, model, cluster, { profile });
    expect(recomputed.stages[0].backwardMs).toBeCloseTo(stageLayers[0] * (perLayerF + perLayerB), 9);
    const uncalibrated = costOfPlan(plan, model, cluster);
    expect(cost.stepMs).not.toBeCloseTo(uncalibrated.stepMs, 3);
  });
});
