import { existsSync, mkdirSync, mkdtempSync, readdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { zooModel } from '../../engine/model/zoo.js';
import { presetPlan } from '../../engine/plan/presets.js';
import { assertRunFolderUsable } from '../../engine/node/jobs/runFolderGuard.js';
import { acquireRunLock, releaseRunLock, RunFolderBusyError } from '../../engine/node/jobs/runLock.js';
import { createRunDir } from '../../engine/node/jobs/runStore.js';
import type { RunRecord } from '../../engine/node/jobs/runRecord.js';

const root = mkdtempSync(join(tmpdir(), 'shoal-run-folder-guard-'));
afterAll(() => rmSync(root, { recursive: true, force: true }));

const model = zooModel('mlp');
const record = (jobId: string): RunRecord => ({ jobId, createdAt: new Date(0).toISOString(), model: 'mlp', plan: presetPlan(model, 'pp1-dp1'), agents: 1, steps: 4 });

/** A finished run in `dir`: its record, its events and a checkpoint of step 4 (the bytes do not matter here). */
function finishedRun(dir: string, jobId: string): void {
  createRunDir(record(jobId), dir);
  releaseRunLock(dir);
  writeFileSync(join(dir, 'events.jsonl'), '{"type":"final"}\n');
  writeFileSync(join(dir, 'checkpoints', 'step-0000004.ckpt'), 'old weights');
}

/** Every file under `dir` with its bytes, to see that a refusal changed nothing. */
function snapshot(dir: string): Record<string, string> {
  const files: Record<string, string> = {};
  for (const entry of readdirSync(dir, { recursive: true, withFileTypes: true })) {
    if (entry.isFile()) files[join(entry.parentPath, entry.name)] = readFileSync(join(entry.parentPath, entry.name), 'utf8');
  }
  return files;
}

const refusal = (fn: () => unknown): Error => {
  try {
    fn();
  } catch (err) {
    return err as Error;
  }
  throw new Error('expected a refusal');
};

describe('a run folder holds one job', () => {
  it('a new or empty folder is used', () => {
    const fresh = join(root, 'fresh', 'run');
    expect(createRunDir(record('job-a'), fresh)).toBe(fresh);
    releaseRunLock(fresh);
    const empty = join(root, 'empty');
    mkdirSync(join(empty, 'checkpoints'), { recursive: true });
    createRunDir(record('job-b'), empty);
    releaseRunLock(empty);
    expect(JSON.parse(readFileSync(join(empty, 'job.json'), 'utf8'))).toMatchObject({ jobId: 'job-b' });
  });

  it('an earlier run is refused, naming its job and step and how to resume it, and nothing of it changes', () => {
    const dir = join(root, 'finished');
    finishedRun(dir, 'job-old');
    const before = snapshot(dir);
    const err = refusal(() => createRunDir(record('job-new'), dir));
    expect(err.message).toMatch(new RegExp(`^Run folder ${dir} holds an earlier run \\(job job-old, at step 4 \\(checkpoint saved \\d{4}-`));
    expect(err.message).toContain(`Continue it with \`shoal resume ${dir}\``);
    expect(err.message).toContain('pass --overwrite');
    expect(snapshot(dir)).toEqual(before);
    expect(existsSync(join(dir, 'run.lock'))).toBe(false);
  });

  it("a folder of the user's own files is refused, naming them; nothing is written", () => {
    const dir = join(root, 'user');
    mkdirSync(dir);
    writeFileSync(join(dir, 'job.json'), '{"mine": true}');
    writeFileSync(join(dir, 'events.jsonl'), 'my notes\n');
    const err = refusal(() => createRunDir(record('job-c'), dir));
    expect(err.message).toBe(
      `Run folder ${dir} is not empty: it holds events.jsonl, job.json. So that none of it is written over, ` +
        'choose a new or empty folder (--out), or pass --overwrite to replace what is there.',
    );
    expect(readFileSync(join(dir, 'job.json'), 'utf8')).toBe('{"mine": true}');
    expect(readdirSync(dir).sort()).toEqual(['events.jsonl', 'job.json']);
  });

  it('--overwrite removes the earlier run (records, checkpoints) and keeps other files', () => {
    const dir = join(root, 'overwritten');
    finishedRun(dir, 'job-old');
    writeFileSync(join(dir, 'README.txt'), 'kept');
    createRunDir(record('job-new'), dir, undefined, { overwrite: true });
    releaseRunLock(dir);
    expect(JSON.parse(readFileSync(join(dir, 'job.json'), 'utf8'))).toMatchObject({ jobId: 'job-new' });
    expect(readdirSync(join(dir, 'checkpoints'))).toEqual([]);
    expect(existsSync(join(dir, 'events.jsonl'))).toBe(false);
    expect(readFileSync(join(dir, 'README.txt'), 'utf8')).toBe('kept');
  });

  it('the run being resumed keeps its folder and checkpoints', () => {
    const dir = join(root, 'resumed');
    finishedRun(dir, 'job-old');
    createRunDir(record('job-old'), dir, undefined, { resuming: true });
    releaseRunLock(dir);
    expect(readdirSync(join(dir, 'checkpoints'))).toEqual(['step-0000004.ckpt']);
    expect(readFileSync(join(dir, 'events.jsonl'), 'utf8')).toBe('{"type":"final"}\n');
  });

  it('a file, or a path through a file, is refused before anything is created', () => {
    const file = join(root, 'a-file');
    writeFileSync(file, 'x');
    expect(refusal(() => assertRunFolderUsable(file)).message).toBe(`Run folder ${file}: ${file} is a file, not a folder. Give a folder for the run (--out), new or empty.`);
    const below = join(file, 'run');
    expect(refusal(() => createRunDir(record('job-d'), below, undefined, { overwrite: true })).message).toContain(`${file} is a file, not a folder`);
    expect(readFileSync(file, 'utf8')).toBe('x');
  });

  it('a folder a live job holds is refused as busy, even with --overwrite', () => {
    const dir = join(root, 'busy');
    mkdirSync(dir);
    acquireRunLock(dir);
    try {
      expect(refusal(() => createRunDir(record('job-e'), dir, undefined, { overwrite: true }))).toBeInstanceOf(RunFolderBusyError);
    } finally {
      releaseRunLock(dir);
    }
  });
});
