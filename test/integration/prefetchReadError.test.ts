import { mkdtempSync, rmSync, truncateSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, expect, it } from 'vitest';
import { selectBackend } from '../../agents/backend/selectBackend.js';
import { LocalJob } from '../../engine/node/jobs/localJob.js';
import { loadModel } from '../../engine/node/modelRef.js';
import { trainingSetupFrom } from '../../engine/node/trainingOptions.js';
import { parsePlan } from '../../engine/plan/plan.js';
import { presetPlan } from '../../engine/plan/presets.js';
import type { JobEvent } from '../../engine/protocol/events.js';
import { constrainedMlp, saveLayersModel, writeNpyData } from '../support/userModels.js';

/**
 * A data file cut short under a running job (real agents, rows read ahead by the prefetch worker):
 * the step fails with the reader's message — the file and the rows — reported by the job, not an
 * unhandled rejection or a silent stop.
 */
let root: string;
beforeAll(async () => {
  await selectBackend();
  root = mkdtempSync(join(tmpdir(), 'shoal-prefetch-error-'));
}, 60_000);
afterAll(() => rmSync(root, { recursive: true, force: true }));

it('a .npy file truncated under a running job fails the step with the file and rows', async () => {
  const modelFile = await saveLayersModel(constrainedMlp(), join(root, 'model'));
  const data = join(root, 'data');
  writeNpyData(data, { features: { shape: [6], kind: 'float' }, probs: { shape: [], kind: { classes: 3 } } }, 4000);
  const model = loadModel(modelFile);
  const plan = parsePlan({ ...presetPlan(model, 'pp2-dp1', { globalBatch: 16, microBatches: 2, seed: 3, optimizer: { kind: 'sgd', learningRate: 0.01, momentum: 0 } }), model: modelFile });
  const training = trainingSetupFrom({ data }, model, plan.seed);
  const events: JobEvent[] = [];
  let cut = false;
  const job: LocalJob = new LocalJob({
    model, plan, training, agents: 2, steps: 200, runDir: join(root, 'run'), profile: false,
    onEvent: (e) => {
      events.push(e);
      if (e.type === 'step' && !cut) {
        cut = true;
        truncateSync(join(data, 'features.npy'), 1000);
      }
      const text = JSON.stringify(e);
      if (/truncated while reading rows/.test(text)) void job.stop();
    },
  });
  await job.start().catch(() => undefined);
  await job.exited();
  const said = events.map((e) => JSON.stringify(e)).filter((t) => /truncated while reading rows/.test(t));
  expect(said.length).toBeGreaterThan(0);
  expect(said[0]).toMatch(/"level":"error".*features\.npy: truncated while reading rows \d+\.\.\d+ \(did the file change under the run\?\)/);
}, 240_000);
