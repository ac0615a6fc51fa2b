import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { planBuckets } from '../../agents/exec/gradientBuckets.js';
import { localClusterSpec } from '../../engine/cluster/cluster.js';
import { costOfPlan } from '../../engine/cost/costOfPlan.js';
import { zooModel } from '../../engine/model/zoo.js';
import type { ModelGraph } from '../../engine/model/graph.js';
import { presetPlan } from '../../engine/plan/presets.js';
import { GRADIENT_BUCKET_BYTES } from '../../engine/plan/runtimeConstants.js';
import { JobProfileSchema, type JobProfile, type LayerTiming } from '../../engine/protocol/profile.js';
import { readRun } from '../../engine/node/jobs/runHistory.js';
import { createRunDir } from '../../engine/node/jobs/runStore.js';
import { predictJob } from '../../renderer/src/monitor/jobPrediction.js';
import { derivePlan } from '../../renderer/src/store/planState.js';

/**
 * One plan, one prediction: the plan editor (derivePlan), the Monitor (predictJob) and the Runs view
 * (readRun) price a plan on this machine's agents alike, at datasheet speeds and calibrated by a run's
 * profile. mlp-wide's 22 MB of gradients span several of the runtime's buckets, so a cost model that
 * priced another bucket size than the agents' in one of them would differ here.
 */
const root = mkdtempSync(join(tmpdir(), 'shoal-prediction-'));
afterAll(() => rmSync(root, { recursive: true, force: true }));

/** What the agents of a run would report: 0.5 ms per call + 0.01 ms per sample forward, one stage per rank. */
function profileOf(model: ModelGraph, agents: number): JobProfile {
  const layers: LayerTiming[] = [];
  for (const l of model.layers) {
    for (const batch of [4, 16, 64]) {
      const forwardMs = l.spec.kind === 'input' ? 0 : 0.5 + 0.01 * batch;
      const backwardMs = l.spec.kind === 'input' ? 0 : 1 + 0.02 * batch;
      layers.push({ id: l.id, rank: 0, device: 0, batch, forwardMs, backwardMs, forwardMsPerSample: forwardMs / batch, backwardMsPerSample: backwardMs / batch, forwardFlops: l.forwardFlops, backwardFlops: l.backwardFlops });
    }
  }
  const ranks = Array.from({ length: agents }, (_, rank) => rank);
  return JobProfileSchema.parse({
    version: 1,
    model: model.name,
    createdAt: new Date(0).toISOString(),
    executor: { recomputeForward: false },
    agents: ranks.map((rank) => ({ rank, stage: 0, replica: rank, device: rank, host: `local-${rank}`, backend: 'wasm', clockOffsetMs: 0, clockRttMs: 0.1, optimizerMsPerParam: 1e-5, optimizerMsPerTensor: 0.05 })),
    layers,
    links: ranks.slice(1).map((r) => ({ from: 0, to: r, fromDevice: 0, toDevice: r, alpha: 1e-4, beta: 1e9, rttMs: 0.2 })),
  });
}

let runs = 0;
function runsView(model: ModelGraph, preset: string, agents: number, profile?: JobProfile) {
  const id = `run-${++runs}`;
  const dir = createRunDir({ jobId: id, createdAt: new Date(0).toISOString(), model: model.name, plan: presetPlan(model, preset), agents, steps: 10 }, join(root, id));
  if (profile) writeFileSync(join(dir, 'profile.json'), JSON.stringify(profile));
  return readRun(id, undefined, root);
}

describe('a plan is priced alike in the editor, the Monitor and the Runs view', () => {
  const cases: [string, string, number][] = [
    ['mlp', 'pp1-dp4', 4],
    ['mlp', 'pp2-dp2', 4],
    ['mlp-wide', 'pp1-dp2', 2],
    ['mlp-wide', 'pp2-dp2-m4', 4],
    ['cnn', 'pp2-dp1', 2],
  ];

  it.each(cases)('%s %s on %i agents at datasheet speeds', (name, preset, agents) => {
    const model = zooModel(name);
    const plan = presetPlan(model, preset);
    const editor = derivePlan(model, plan, 'local', agents).cost?.stepMs;
    const monitor = predictJob(plan, model, agents);
    const run = runsView(model, preset, agents);
    expect(editor).toBeGreaterThan(0);
    expect(monitor).toMatchObject({ stepMs: editor, calibrated: false });
    expect(run.predictedStepMs).toBe(editor);
    expect(run.calibratedStepMs).toBeUndefined();
  });

  it.each(cases)('%s %s on %i agents calibrated by the run', (name, preset, agents) => {
    const model = zooModel(name);
    const profile = profileOf(model, agents);
    const monitor = predictJob(presetPlan(model, preset), model, agents, profile);
    const run = runsView(model, preset, agents, profile);
    expect(monitor?.calibrated).toBe(true);
    expect(run.calibratedStepMs).toBe(monitor?.stepMs);
  });

  it('prices the bucket size the agents cut gradients into', () => {
    const model = zooModel('mlp-wide');
    const plan = presetPlan(model, 'pp1-dp2');
    const sizes = model.layers.flatMap((l) => (l.params ? [l.params] : []));
    expect(planBuckets(sizes).length).toBeGreaterThan(1);
    const cluster = localClusterSpec(2);
    const asRun = costOfPlan(plan, model, cluster, { allReduceBucketBytes: GRADIENT_BUCKET_BYTES });
    expect(derivePlan(model, plan, 'local', 2).cost?.stepMs).toBe(asRun.stepMs);
    // Another bucket size prices differently, so the agreement above is not vacuous.
    expect(costOfPlan(plan, model, cluster, { allReduceBucketBytes: 25 << 20 }).stepMs).not.toBe(asRun.stepMs);
  });
});
