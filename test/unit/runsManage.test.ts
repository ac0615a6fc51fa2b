import { spawn } from 'node:child_process';
import { existsSync, mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { hostname, tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { deleteRun, runsTrash } from '../../engine/node/jobs/runDelete.js';
import { listRuns, readRun } from '../../engine/node/jobs/runHistory.js';
import { acquireRunLock, releaseRunLock } from '../../engine/node/jobs/runLock.js';
import { readRunMeta, RUN_META_FILE, updateRunMeta } from '../../engine/node/jobs/runMeta.js';
import { loadModel } from '../../engine/node/modelRef.js';
import { presetPlan } from '../../engine/plan/presets.js';

/**
 * Managing runs on disk (the Runs table): a run's name, tags and notes in run.meta.json (validated,
 * written atomically, kept across reads), the summary's columns (dataset, hosts, duration, final loss,
 * metrics), and deleting a run — into Shoal's trash or for good — refused while a job holds its lock.
 */
const data = mkdtempSync(join(tmpdir(), 'shoal-runs-manage-'));
const root = join(data, 'runs');
afterAll(() => rmSync(data, { recursive: true, force: true }));

const step = (s: number) => ({ type: 'step', step: s, epoch: s / 4, loss: 2 / (s + 1), samplesPerSec: 100, stepMs: 10, elapsedMs: 250 * (s + 1) });

function writeRun(id: string, extra: object = {}, final = true): string {
  const dir = join(root, id);
  mkdirSync(join(dir, 'checkpoints'), { recursive: true });
  const dataset = { name: 'iris', description: 'csv iris.csv', checksum: 'ab'.repeat(32), checksumOf: 'x', trainSamples: 120, validationSamples: 30 };
  writeFileSync(join(dir, 'job.json'), JSON.stringify({ jobId: id, createdAt: '2026-01-02T00:00:00.000Z', model: 'mlp', plan: presetPlan(loadModel('mlp'), 'pp1-dp1'), agents: 1, steps: 4, dataset, ...extra }));
  const events: object[] = [step(0), step(1), step(2), step(3), { type: 'eval', step: 4, epoch: 1, validationLoss: 0.5, validationAccuracy: 0.8, metrics: { accuracy: 0.8, top5: 0.99 } }];
  if (final) events.push({ type: 'final', final: true, validationLoss: 0.5, validationAccuracy: 0.8, metrics: { accuracy: 0.8, top5: 0.99 }, steps: 4, epochs: 1, seconds: 1.5, samplesPerSec: 100, backends: ['wasm'] });
  writeFileSync(join(dir, 'events.jsonl'), events.map((e) => JSON.stringify(e)).join('\n') + '\n');
  return dir;
}

describe('run details and columns', () => {
  it('lists the columns of the Runs table from the run folder', () => {
    writeRun('run-a');
    const run = listRuns(new Map(), root).find((r) => r.id === 'run-a')!;
    expect(run).toMatchObject({ dataset: 'iris', hosts: ['this machine'], durationMs: 1500, finalLoss: 0.5, validationLoss: 0.5, metrics: { accuracy: 0.8, top5: 0.99 }, tags: [], state: 'finished' });
    expect(run.name).toBeUndefined();
    expect(readRun('run-a', undefined, root).curves.epoch).toEqual([0, 0.25, 0.5, 0.75]);
  });

  it('a run without a final event takes its duration from the last step; a deployed run names its hosts', () => {
    const dir = writeRun('run-b', {}, false);
    writeFileSync(join(dir, 'deploy.json'), JSON.stringify({
        version: 1,
        jobId: 'run-b',
        createdAt: '2026-01-02T00:00:00.000Z',
        launcher: 'ssh',
        cluster: 'lab',
        hosts: ['gpu1', 'gpu2'].map((alias) => ({ alias, address: `${alias}.lab`, port: 22, user: 'me', identityFiles: [], useAgent: true, jump: [] })),
        head: 'gpu1',
        model: 'mlp',
        steps: 4,
        coordinator: { listenHost: '127.0.0.1', port: 4000, pid: 10 },
        processes: [],
      }));
    const run = listRuns(new Map(), root).find((r) => r.id === 'run-b')!;
    expect(run).toMatchObject({ durationMs: 1000, hosts: ['gpu1', 'gpu2'], state: 'incomplete', validationLoss: 0.5 });
  });

  it('names, tags and notes persist in run.meta.json; an edit keeps what it leaves out; empty clears', () => {
    const dir = writeRun('run-c');
    updateRunMeta(dir, { name: '  baseline  ', tags: ['lr-sweep', ' iris ', 'lr-sweep'] });
    updateRunMeta(dir, { notes: 'first try\nwith two lines' });
    expect(readRunMeta(dir)).toEqual({ name: 'baseline', tags: ['lr-sweep', 'iris'], notes: 'first try\nwith two lines' });
    expect(JSON.parse(readFileSync(join(dir, RUN_META_FILE), 'utf8'))).toMatchObject({ version: 1, name: 'baseline' });
    expect(listRuns(new Map(), root).find((r) => r.id === 'run-c')).toMatchObject({ name: 'baseline', tags: ['lr-sweep', 'iris'] });
    updateRunMeta(dir, { name: '', notes: '' });
    expect(readRunMeta(dir)).toEqual({ tags: ['lr-sweep', 'iris'] });
    // No temporary file is left beside it.
    expect(existsSync(join(dir, `${RUN_META_FILE}.tmp`))).toBe(false);
  });

  it('refuses bad edits, naming the field and the limit', () => {
    const dir = writeRun('run-d');
    expect(() => updateRunMeta(dir, { name: 'x'.repeat(121) })).toThrow(/name: a run name has at most 120 characters/);
    expect(() => updateRunMeta(dir, { tags: ['a,b'] })).toThrow(/tags\.0: a tag has no comma/);
    expect(() => updateRunMeta(dir, { tags: Array.from({ length: 21 }, (_, i) => `t${i}`) })).toThrow(/at most 20 tags/);
    expect(() => updateRunMeta(dir, { notes: 'n'.repeat(4001) })).toThrow(/notes: notes have at most 4000 characters/);
    expect(() => updateRunMeta(dir, { colour: 'red' })).toThrow(/colour/);
    expect(() => updateRunMeta(dir, { name: 'two\nlines' })).toThrow(/one line/);
    expect(existsSync(join(dir, RUN_META_FILE))).toBe(false);
    // A hand-edited file that does not parse does not hide the run.
    writeFileSync(join(dir, RUN_META_FILE), '{ not json');
    expect(listRuns(new Map(), root).find((r) => r.id === 'run-d')).toMatchObject({ tags: [] });
  });
});

describe('deleting runs', () => {
  it('moves a run to the trash (a second one of the same id beside it), or removes it for good', () => {
    writeRun('run-e');
    const first = deleteRun('run-e', {}, root);
    expect(first.trashedTo).toBe(join(runsTrash(root), 'run-e'));
    expect(existsSync(join(first.trashedTo!, 'job.json'))).toBe(true);
    expect(existsSync(join(first.trashedTo!, 'run.lock'))).toBe(false);
    expect(existsSync(join(root, 'run-e'))).toBe(false);
    writeRun('run-e');
    expect(deleteRun('run-e', {}, root).trashedTo).toBe(join(runsTrash(root), 'run-e.2'));
    writeRun('run-f');
    expect(deleteRun('run-f', { permanently: true }, root)).toEqual({ id: 'run-f' });
    expect(existsSync(join(root, 'run-f'))).toBe(false);
    expect(listRuns(new Map(), root).map((r) => r.id)).not.toContain('run-f');
    expect(() => deleteRun('run-f', {}, root)).toThrow(/No run "run-f"/);
    expect(() => deleteRun('../runs', {}, root)).toThrow(/not a run id/);
  });

  it('refuses a run whose folder a live job holds (another process, or this one), and one the studio runs', async () => {
    const dir = writeRun('run-g');
    const owner = spawn('sleep', ['60'], { stdio: 'ignore' });
    try {
      writeFileSync(join(dir, 'run.lock'), JSON.stringify({ pid: owner.pid, host: hostname(), since: '2026-01-02T00:00:00.000Z' }));
      expect(() => deleteRun('run-g', {}, root)).toThrow(`Run run-g is still running (pid ${owner.pid} on ${hostname()}, since 2026-01-02T00:00:00.000Z): stop it before deleting it.`);
      expect(existsSync(join(dir, 'job.json'))).toBe(true);
    } finally {
      owner.kill('SIGKILL');
      await new Promise((r) => owner.once('exit', r));
    }
    rmSync(join(dir, 'run.lock'));
    acquireRunLock(dir);
    expect(() => deleteRun('run-g', { permanently: true }, root)).toThrow(/still running/);
    releaseRunLock(dir);
    expect(() => deleteRun('run-g', { running: true }, root)).toThrow('Run run-g is still running: stop it before deleting it.');
    // Its owner gone, the run can go.
    expect(deleteRun('run-g', {}, root).trashedTo).toBeDefined();
  });
});
