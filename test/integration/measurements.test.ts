import { existsSync, mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { zooModel } from '../../engine/model/zoo.js';
import { LocalJob } from '../../engine/node/jobs/localJob.js';
import { presetPlan } from '../../engine/plan/presets.js';
import type { JobEvent, TimelineJobEvent } from '../../engine/protocol/events.js';
import { JobProfileSchema } from '../../engine/protocol/profile.js';

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
});
