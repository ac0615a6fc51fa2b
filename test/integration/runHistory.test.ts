import { existsSync, mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import { dispatchCall } from '../../electron/rpcDispatch.js';
import { createStudioService, type StudioService } from '../../engine/node/api.js';
import { zooModel } from '../../engine/model/zoo.js';
import { presetPlan } from '../../engine/plan/presets.js';

const data = mkdtempSync(join(tmpdir(), 'shoal-runs-'));
const previous = process.env.SHOAL_DATA_DIR;
beforeAll(() => {
  process.env.SHOAL_DATA_DIR = data;
});
afterAll(() => {
  if (previous === undefined) delete process.env.SHOAL_DATA_DIR;
  else process.env.SHOAL_DATA_DIR = previous;
  rmSync(data, { recursive: true, force: true });
});

let service: StudioService | null = null;
afterEach(async () => {
  await service?.close();
  service = null;
});

async function train(svc: StudioService, preset: string, steps: number): Promise<string> {
  const done = new Promise<void>((resolve) => svc.onJobEvent((_, { event: e }) => (e.type === 'final' || (e.type === 'status' && e.state === 'failed')) && resolve()));
  const { jobId } = await svc.startTraining({ plan: presetPlan(zooModel('mlp'), preset), agents: 2, steps });
  await done;
  return jobId;
}

describe('runs on disk (studio history)', () => {
  it('lists past runs after a restart, opens their curves, compares predictions and exports weights', async () => {
    service = createStudioService({ shell: 'web' });
    const first = await train(service, 'pp2-dp1', 12);
    const second = await train(service, 'pp1-dp2', 8);
    await service.close();

    // A new studio session: nothing in memory, everything from the run folders.
    service = createStudioService({ shell: 'web' });
    expect(await service.listJobs()).toEqual([]);
    const runs = await service.listRuns();
    expect(runs.map((r) => r.id)).toEqual([second, first]);
    expect(runs[1]).toMatchObject({ model: 'mlp', state: 'finished', stepsDone: 12, checkpoints: 1, hasHistory: true, planLabel: expect.stringMatching(/^2 stages × 1 replica, gpipe/) });
    expect(runs[1].validationAccuracy).toBeGreaterThan(0.3);

    const run = await service.getRun(first);
    expect(run.curves.step).toEqual(Array.from({ length: 12 }, (_, i) => i));
    expect(run.curves.loss.every((l) => Number.isFinite(l) && l > 0)).toBe(true);
    expect(run.final?.steps).toBe(12);
    expect(run.plan.stages).toHaveLength(2);
    expect(run.measuredStepMs).toBeGreaterThan(0);
    expect(run.predictedStepMs).toBeGreaterThan(0);
    expect(run.calibratedStepMs).toBeGreaterThan(0);

    const exported = await service.exportRunWeights(first);
    expect(exported).toMatchObject({ model: 'mlp', step: 12, dir: join(data, 'runs', first, 'tfjs-model') });
    expect(existsSync(join(exported.dir, 'model.json'))).toBe(true);
    const files = await service.exportedWeightFiles(first);
    expect(files.map((f) => f.name)).toEqual(['model.json', 'group1-shard1of1.bin']);
    expect(Buffer.from(files[1].base64, 'base64').length).toBe(exported.bytes);
    expect(JSON.parse(Buffer.from(files[0].base64, 'base64').toString('utf8'))).toMatchObject({ format: 'layers-model' });
  });

  it('refuses run ids that are paths, through the dispatcher both shells use', async () => {
    service = createStudioService({ shell: 'web' });
    const result = await dispatchCall(service, { kind: 'call', id: 1, method: 'getRun', params: ['../../etc'] });
    expect(result).toMatchObject({ ok: false, error: expect.stringMatching(/Bad parameters for getRun: 0: a run id is a folder name/) });
    const missing = await dispatchCall(service, { kind: 'call', id: 2, method: 'exportRunWeights', params: ['job-nope'] });
    expect(missing).toMatchObject({ ok: false, error: expect.stringMatching(/No run "job-nope" in/) });
  });
});
