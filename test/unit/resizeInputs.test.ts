import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, expect, test } from 'vitest';
import { resizeInputs } from '../../engine/node/jobs/resizeInputs.js';
import { runInputs } from '../../engine/node/jobs/runInputs.js';
import { loadModel } from '../../engine/node/modelRef.js';
import { presetPlan } from '../../engine/plan/presets.js';

const plan = presetPlan(loadModel('mlp'), 'pp1-dp1');
/** What a run with a NumPy folder records as its training setup (the folder's samples counted when it started). */
const setupOf = (dir: string) => ({ data: { kind: 'npy', dir }, losses: [{ output: 'logits', loss: 'sparseCategoricalCrossentropy', fromLogits: true, weight: 1, metric: null }], trainSamples: 4, validationSamples: 0 });

/**
 * A resize sends a new host the job's data only while it is still what the job trains on; the
 * SSH cases (a fresh host, files changed since the deploy) are in integration/deploySshUserResize.
 */

const dirs: string[] = [];
afterEach(() => dirs.splice(0).forEach((d) => rmSync(d, { recursive: true, force: true })));

function deployedRun(): { runDir: string; data: string } {
  const root = mkdtempSync(join(tmpdir(), 'shoal-resizeinputs-'));
  dirs.push(root);
  const data = join(root, 'data');
  mkdirSync(data);
  writeFileSync(join(data, 'x.npy'), Buffer.alloc(256, 1));
  const runDir = join(root, 'run');
  mkdirSync(runDir);
  writeFileSync(join(runDir, 'job.json'), JSON.stringify({ jobId: 'j', createdAt: '', model: 'mlp', plan, agents: 1, steps: 1, training: setupOf(data) }));
  return { runDir, data };
}

test('unchanged files: the payload the job reads; changed: refused for a new host, nothing to send to the job\'s own hosts', () => {
  const { runDir, data } = deployedRun();
  const atDeploy = runInputs(runDir)!;
  const reads = atDeploy.remote('~/work');
  const job = { jobId: 'j', reads, remoteDir: '~/work', newHosts: ['r4'] };
  expect(resizeInputs(runDir, job)?.hash).toBe(atDeploy.hash);

  writeFileSync(join(data, 'x.npy'), Buffer.alloc(256, 7));
  expect(() => resizeInputs(runDir, job)).toThrow(
    new RegExp(`job j changed here since it was deployed: its agents read ~/work/inputs/${atDeploy.hash}, but .*x\\.npy now make ~/work/inputs/(?!${atDeploy.hash})\\w+, so r4 would get other files`),
  );
  expect(resizeInputs(runDir, { ...job, newHosts: [] })).toBeNull();
});
