import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, expect, test } from 'vitest';
import { runInputs } from '../../engine/node/jobs/runInputs.js';
import { loadModel } from '../../engine/node/modelRef.js';
import { presetPlan } from '../../engine/plan/presets.js';

const plan = presetPlan(loadModel('mlp'), 'pp1-dp1');
/** What a run with a NumPy folder records as its training setup (the folder's samples counted when it started). */
const setupOf = (dir: string) => ({ data: { kind: 'npy', dir }, losses: [{ output: 'logits', loss: 'sparseCategoricalCrossentropy', fromLogits: true, weight: 1, metric: null }], trainSamples: 4, validationSamples: 0 });

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
  const training = setupOf(data);
  writeFileSync(join(runDir, 'job.json'), JSON.stringify({ jobId: 'j', createdAt: '', model: 'mlp', plan, agents: 1, steps: 1, training }));
  const payload = runInputs(runDir);
  expect(payload?.files.map((f) => f.relative).sort()).toEqual(['data/x.npy', 'data/y.npy']);
  expect(payload?.bytes).toBe(320);
  expect(payload?.remote().training.data).toMatchObject({ kind: 'npy', dir: `~/.shoal/inputs/${payload!.hash}/data` });
  const plain = join(root, 'plain');
  mkdirSync(plain);
  writeFileSync(join(plain, 'job.json'), JSON.stringify({ jobId: 'k', createdAt: '', model: 'mlp', plan, agents: 1, steps: 1 }));
  expect(runInputs(plain)).toBeNull();
});
