import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, expect, test } from 'vitest';
import { runInputs } from '../../engine/node/jobs/runInputs.js';

/** A host added to a deployed job by resize gets the job's data: runInputs rebuilds the payload from job.json. */

const dirs: string[] = [];
afterEach(() => dirs.splice(0).forEach((d) => rmSync(d, { recursive: true, force: true })));

test('a job with uploaded data yields its payload (the files and their hash); a built-in MNIST job yields none', () => {
  const root = mkdtempSync(join(tmpdir(), 'shoal-runinputs-'));
  dirs.push(root);
  const data = join(root, 'data');
  mkdirSync(data);
  writeFileSync(join(data, 'x.npy'), Buffer.alloc(256, 1));
  writeFileSync(join(data, 'y.npy'), Buffer.alloc(64, 2));
  const runDir = join(root, 'run');
  mkdirSync(runDir);
  const training = { data: { kind: 'npy', dir: data } };
  writeFileSync(join(runDir, 'job.json'), JSON.stringify({ jobId: 'j', createdAt: '', model: 'mlp', plan: {}, agents: 1, steps: 1, training }));
  const payload = runInputs(runDir);
  expect(payload?.files.map((f) => f.relative).sort()).toEqual(['data/x.npy', 'data/y.npy']);
  expect(payload?.bytes).toBe(320);
  expect(payload?.remote().training.data).toMatchObject({ kind: 'npy', dir: `~/.shoal/inputs/${payload!.hash}/data` });
  const plain = join(root, 'plain');
  mkdirSync(plain);
  writeFileSync(join(plain, 'job.json'), JSON.stringify({ jobId: 'k', createdAt: '', model: 'mlp', plan: {}, agents: 1, steps: 1 }));
  expect(runInputs(plain)).toBeNull();
});
