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

  it('prefers timings taken alone, and prices agents sharing a host by the measured slow-down', () => {
    const base = syntheticProfile();
    // The same layers timed with both agents busy at once: 1.5× slower.
    const shared = base.layers.map((t) => ({ ...t, forwardMs: 1.5 * t.forwardMs, backwardMs: 1.5 * t.backwardMs, concurrent: 2 }));
    const profile = calibrate(JobProfileSchema.parse({ ...base, layers: [...base.layers, ...shared] }), cluster);
    expect(profile.layers!.dense_1.forwardMsPerCall).toBeCloseTo(0.5, 9);
    expect(profile.contention![2]).toBeCloseTo(1.5, 9);
    const one = costOfPlan(presetPlan(model, 'pp1-dp1'), model, localClusterSpec(1), { profile });
    const two = costOfPlan(presetPlan(model, 'pp1-dp2', { globalBatch: 128 }), model, localClusterSpec(2), { profile });
    // Same micro-batch of 64 per agent: with two agents on the host each pass takes 1.5 times as long.
    expect(two.stages[0].forwardMs).toBeCloseTo(1.5 * one.stages[0].forwardMs, 9);
    expect(two.stages[0].backwardMs).toBeCloseTo(1.5 * one.stages[0].backwardMs, 9);
  });

  it('interpolates between the batch sizes that were timed, and adds the loss to the last stage', () => {
    const base = syntheticProfile();
    // A size that is off the line: interpolation must pass through it.
    const bent = base.layers.map((t) => (t.batch === 16 && t.id === 'dense_1' ? { ...t, forwardMs: 5 } : t));
    const loss = [8, 64].map((batch) => ({ id: '#loss', rank: 1, device: 1, batch, forwardMs: 0.1 * batch, backwardMs: 0, forwardMsPerSample: 0.1, backwardMsPerSample: 0, forwardFlops: 0, backwardFlops: 0 }));
    const profile = calibrate(JobProfileSchema.parse({ ...base, layers: [...bent, ...loss] }), cluster);
    expect(profile.layers!.dense_1.points!.map((p) => p.batch)).toEqual([4, 16, 64]);
    const plan = presetPlan(model, 'pp1-dp1', { globalBatch: 16 });
    const withLoss = costOfPlan(plan, model, localClusterSpec(1), { profile });
    const others = plan.stages[0].layers.filter((id) => id !== 'dense_1' && model.layers.find((l) => l.id === id)!.spec.kind !== 'input').length;
    expect(withLoss.stages[0].forwardMs).toBeCloseTo(5 + others * (0.5 + 0.01 * 16) + 0.1 * 16, 9);
    // Between 16 and 64 samples: on the straight segment from 5 ms to 1.14 ms.
    const at40 = costOfPlan(presetPlan(model, 'pp1-dp1', { globalBatch: 40 }), model, localClusterSpec(1), { profile });
    expect(at40.stages[0].forwardMs).toBeCloseTo(5 + (1.14 - 5) * (24 / 48) + others * (0.5 + 0.01 * 40) + 0.1 * 40, 9);
  });

  it('fits the gradient copies and the all-reduce without them, and adds the step round trip', () => {
    const base = syntheticProfile();
    const copyMs = (bytes: number) => 0.2 + bytes * 1e-6;
    const ringMs = (bytes: number) => 2 * 0.5 + bytes / 1e6; // n = 2: S/β + 2α with α = 0.5 ms, β = 1 GB/s
    const allReduce = [1 << 20, 4 << 20, 16 << 20].flatMap((bytes) => [
      { rank: 0, device: 0, members: 1, bytes, ms: copyMs(bytes) },
      { rank: 0, device: 0, members: 2, bytes, ms: copyMs(bytes) + ringMs(bytes) },
      { rank: 1, device: 1, members: 2, bytes, ms: copyMs(bytes) + ringMs(bytes) },
    ]);
    const profile = calibrate(JobProfileSchema.parse({ ...base, allReduce }), cluster);
    expect(profile.gradientCopy!.msPerBucket).toBeCloseTo(0.2, 6);
    expect(profile.gradientCopy!.msPerByte).toBeCloseTo(1e-6, 12);
    expect(profile.allReduce!.alpha).toBeCloseTo(0.5e-3, 9);
    expect(profile.allReduce!.beta).toBeCloseTo(1e9, 0);
    expect(profile.stepOverheadMs).toBeCloseTo(0.1, 9);
    const plan = presetPlan(model, 'pp1-dp2');
    const cost = costOfPlan(plan, model, localClusterSpec(2), { profile });
    const bytes = model.layers.reduce((n, l) => n + l.params, 0) * 4;
    expect(cost.stages[0].allReduceMs).toBeCloseTo(ringMs(bytes), 6);
    // Without the measured all-reduce the ring is priced on the loopback link instead.
    const linkOnly = costOfPlan(plan, model, localClusterSpec(2), { profile: { ...profile, allReduce: undefined } });
    expect(linkOnly.stages[0].allReduceMs).not.toBeCloseTo(cost.stages[0].allReduceMs, 3);
  });
});
