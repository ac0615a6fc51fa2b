import { existsSync, mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { zooModel } from '../../engine/model/zoo.js';
import { LocalJob } from '../../engine/node/jobs/localJob.js';
import { presetPlan } from '../../engine/plan/presets.js';
import type { JobEvent, TimelineJobEvent } from '../../engine/protocol/events.js';
import { JobProfileSchema } from '../../engine/protocol/profile.js';
import { localClusterSpec } from '../../engine/cluster/cluster.js';
import { calibrate } from '../../engine/cost/calibrate.js';
import { costOfPlan } from '../../engine/cost/costOfPlan.js';

const root = mkdtempSync(join(tmpdir(), 'shoal-measure-'));
afterAll(() => rmSync(root, { recursive: true, force: true }));

/**
 * A small real job measures itself: profile.json in the run folder (every layer timed, the link
 * between the two agents measured, clock offsets) and the timeline of every step on the coordinator's
 * axis. Orderings only: no wall time is asserted.
 */
describe('measurements of a running job', () => {
  it('mlp pp2 on 2 agents writes profile.json and emits ordered timelines', async () => {
    const model = zooModel('mlp');
    const plan = presetPlan(model, 'pp2-dp1', { microBatches: 4 });
    const events: JobEvent[] = [];
    const runDir = join(root, 'pp2');
    const job = new LocalJob({ model, plan, agents: 2, steps: 3, evalEverySteps: 3, runDir, timelineEverySteps: 1, onEvent: (e) => events.push(e) });
    await job.start();
    await job.exited();

    const path = join(runDir, 'profile.json');
    expect(existsSync(path)).toBe(true);
    const profile = JobProfileSchema.parse(JSON.parse(readFileSync(path, 'utf8')));
    for (const layer of model.layers) expect(profile.layers.filter((l) => l.id === layer.id).length, layer.id).toBeGreaterThan(0);
    for (const t of profile.layers) {
      expect(Number.isFinite(t.forwardMsPerSample)).toBe(true);
      expect(t.backwardMsPerSample).toBeGreaterThanOrEqual(0);
    }
    expect(profile.links).toHaveLength(1);
    expect(profile.links[0]).toMatchObject({ from: 0, to: 1 });
    expect(profile.links[0].beta).toBeGreaterThan(0);
    expect(profile.agents.map((a) => a.rank)).toEqual([0, 1]);
    expect(events.some((e) => e.type === 'profile' && e.path === path)).toBe(true);

    const timelines = events.filter((e): e is TimelineJobEvent => e.type === 'timeline');
    expect(timelines.map((t) => t.step)).toEqual([0, 1, 2]);
    for (const t of timelines) {
      for (const stage of [0, 1]) {
        const mine = t.events.filter((e) => e.stage === stage);
        const compute = mine.filter((e) => e.kind === 'forward' || e.kind === 'backward');
        expect(compute.length).toBeGreaterThan(0);
        // Aligned times are monotone within a stage: one agent does one thing at a time.
        const sorted = [...mine].sort((a, b) => a.startMs - b.startMs);
        for (const e of sorted) expect(e.endMs).toBeGreaterThanOrEqual(e.startMs);
        for (let i = 1; i < compute.length; i++) expect(compute[i].startMs).toBeGreaterThanOrEqual(compute[i - 1].endMs - 1e-6);
        // The step closes with the gradient summation and the update (one event or two, by executor).
        expect(mine.filter((e) => e.kind === 'optimizer' || e.kind === 'allreduce').length).toBeGreaterThanOrEqual(1);
      }
      for (let micro = 0; micro < plan.microBatches; micro++) {
        const f0 = t.events.find((e) => e.stage === 0 && e.kind === 'forward' && e.micro === micro)!;
        const b0 = t.events.find((e) => e.stage === 0 && e.kind === 'backward' && e.micro === micro)!;
        const f1 = t.events.find((e) => e.stage === 1 && e.kind === 'forward' && e.micro === micro)!;
        // Forward before its backward on a stage, and across stages after alignment: stage 1's
        // turn-around of a micro-batch sits between stage 0's forward and backward of it.
        expect(b0.startMs).toBeGreaterThanOrEqual(f0.endMs);
        expect(f1.fused).toBe(true);
        expect(f1.startMs).toBeGreaterThanOrEqual(f0.endMs - 1);
        expect(b0.startMs).toBeGreaterThanOrEqual(f1.endMs - 1);
      }
      // GPipe holds every micro-batch's activations on the first stage before its first backward.
      expect(t.memory.find((m) => m.stage === 0)!.peakStashed).toBeGreaterThanOrEqual(plan.microBatches);
    }
  });

  it('a full profile times the whole model on each agent alone and both at once, and the all-reduce', async () => {
    const model = zooModel('mlp');
    const plan = presetPlan(model, 'pp2-dp1', { microBatches: 2 });
    const runDir = join(root, 'full');
    const job = new LocalJob({ model, plan, agents: 2, steps: 1, evalEverySteps: 1, runDir, timelineEverySteps: 0, profileFull: true, profileBatches: [4, 16], profileRepeats: 2, onEvent: () => {} });
    await job.start();
    await job.exited();

    const profile = JobProfileSchema.parse(JSON.parse(readFileSync(join(runDir, 'profile.json'), 'utf8')));
    const ids = [...model.layers.map((l) => l.id), '#loss'];
    for (const rank of [0, 1]) {
      for (const id of ids) {
        const mine = profile.layers.filter((t) => t.rank === rank && t.id === id);
        // Every layer of the model (and the loss) at both sizes, alone and with both agents timing.
        expect(mine.filter((t) => t.concurrent === undefined).map((t) => t.batch).sort((a, b) => a - b), `${id} alone on rank ${rank}`).toEqual([4, 16]);
        expect(mine.filter((t) => t.concurrent === 2).map((t) => t.batch).sort((a, b) => a - b), `${id} shared on rank ${rank}`).toEqual([4, 16]);
      }
      expect(profile.agents[rank].optimizerMsPerParam).toBeGreaterThanOrEqual(0);
      const copies = profile.allReduce!.filter((m) => m.rank === rank && m.members === 1);
      const reduces = profile.allReduce!.filter((m) => m.rank === rank && m.members === 2);
      expect(copies.map((m) => m.bytes)).toEqual([256 << 10, 1 << 20, 4 << 20, 16 << 20]);
      expect(reduces.map((m) => m.bytes)).toEqual([256 << 10, 1 << 20, 4 << 20, 16 << 20]);
    }
    const calibrated = calibrate(profile, localClusterSpec(2));
    expect(Object.keys(calibrated.layers!).sort()).toEqual([...ids].sort());
    expect(calibrated.contention![2]).toBeGreaterThanOrEqual(1);
    expect(calibrated.stepOverheadMs).toBeGreaterThan(0);
    const cost = costOfPlan(presetPlan(model, 'pp1-dp2'), model, localClusterSpec(2), { profile: calibrated });
    expect(cost.stepMs).toBeGreaterThan(0);
  });
});
