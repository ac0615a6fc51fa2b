import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { zooModel } from '../../engine/model/zoo.js';
import type { JobEvent } from '../../engine/protocol/events.js';
import { presetPlan } from '../../engine/plan/presets.js';
import { LocalJob } from '../../engine/node/jobs/localJob.js';
import { latestCheckpoint } from '../../engine/node/jobs/runStore.js';
import { maxRelativeError, readParams } from './paramsFile.js';

/**
 * Checkpoints hold parameters, optimizer state and the step (hence the data position): a job stopped
 * after 6 steps and resumed to 12 learns exactly what an uninterrupted 12-step job learns — also when
 * it resumes under a different plan.
 */
const model = zooModel('mlp');
const root = mkdtempSync(join(tmpdir(), 'shoal-resume-'));
afterAll(() => rmSync(root, { recursive: true, force: true }));

async function run(tag: string, plan: ReturnType<typeof presetPlan>, agents: number, steps: number, resumeFrom?: string): Promise<{ dir: string; events: JobEvent[] }> {
  const dir = join(root, tag);
  const events: JobEvent[] = [];
  const job = new LocalJob({ model, plan, agents, steps, runDir: dir, resumeFrom, onEvent: (e) => events.push(e) });
  await job.start();
  await job.exited();
  return { dir, events };
}

describe('checkpoint and resume', () => {
  it('6 steps + resume to 12 equals 12 uninterrupted steps (Adam, pp2 × dp2)', async () => {
    const plan = presetPlan(model, 'pp2-dp2');
    const whole = await run('whole', plan, 4, 12);
    const first = await run('first', plan, 4, 6);
    const checkpoint = latestCheckpoint(join(first.dir, 'checkpoints'))!;
    expect(checkpoint).toMatch(/step-0000006\.ckpt$/);
    const second = await run('second', plan, 4, 12, checkpoint);
    expect(second.events.find((e) => e.type === 'checkpoint' && e.action === 'restored')).toMatchObject({ step: 6 });
    expect(second.events.filter((e) => e.type === 'step').map((e) => (e.type === 'step' ? e.step : -1))).toEqual([6, 7, 8, 9, 10, 11]);
    const expected = readParams(join(whole.dir, 'checkpoints'));
    const got = readParams(join(second.dir, 'checkpoints'));
    for (const [name, values] of expected) expect(maxRelativeError(got.get(name)!, values), name).toBeLessThanOrEqual(1e-6);
  });

  it('resumes onto a different plan (pp2 × dp2 → pp1 × dp2) and still matches', async () => {
    const sgd = { kind: 'sgd' as const, learningRate: 0.05, momentum: 0.9 };
    const whole = await run('sgd-whole', presetPlan(model, 'pp2-dp2', { optimizer: sgd }), 4, 10);
    const first = await run('sgd-first', presetPlan(model, 'pp2-dp2', { optimizer: sgd }), 4, 5);
    const second = await run('sgd-second', presetPlan(model, 'pp1-dp2', { optimizer: sgd }), 2, 10, latestCheckpoint(join(first.dir, 'checkpoints')));
    const expected = readParams(join(whole.dir, 'checkpoints'));
    const got = readParams(join(second.dir, 'checkpoints'));
    for (const [name, values] of expected) expect(maxRelativeError(got.get(name)!, values), name).toBeLessThanOrEqual(1e-4);
  });

  it('a corrupted checkpoint fails the job with the file named', async () => {
    const bad = join(root, 'bad.ckpt');
    (await import('node:fs')).writeFileSync(bad, 'SHOALCKPT\nnot really');
    const job = new LocalJob({ model, plan: presetPlan(model, 'pp1-dp1'), agents: 1, steps: 2, runDir: join(root, 'bad'), resumeFrom: bad, onEvent: () => {} });
    await expect(job.start()).rejects.toThrow(new RegExp(`Checkpoint ${bad.replace(/[.*+?^${}()|[\]\\/]/g, '\\$&')} .*not loaded`));
    await job.exited();
  });
});
