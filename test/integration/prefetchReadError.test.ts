import { copyFileSync, mkdtempSync, rmSync, truncateSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, expect, it } from 'vitest';
import { selectBackend } from '../../agents/backend/selectBackend.js';
import { LocalJob } from '../../engine/node/jobs/localJob.js';
import { latestCheckpoint } from '../../engine/node/jobs/runStore.js';
import { loadModel } from '../../engine/node/modelRef.js';
import { trainingSetupFrom } from '../../engine/node/trainingOptions.js';
import { parsePlan, type Plan } from '../../engine/plan/plan.js';
import { presetPlan } from '../../engine/plan/presets.js';
import type { JobEvent } from '../../engine/protocol/events.js';
import type { TrainingSetup } from '../../engine/protocol/trainingSetup.js';
import type { ModelGraph } from '../../engine/model/graph.js';
import { constrainedMlp, saveLayersModel, writeNpyData } from '../support/userModels.js';
import { maxRelativeError, readParams } from './paramsFile.js';

/**
 * Bad data at run time loses nothing: a data file cut short under a running job (real agents, rows
 * read ahead by the prefetch worker) fails the job with the reader's message — the file, the rows,
 * and what to do — rather than an unhandled rejection or a silent stop; its checkpoints stay, and once
 * the file is fixed the job resumes from the newest one and ends with the parameters of a run that
 * never met the bad file.
 */
const STEPS = 24;
let root: string;
let model: ModelGraph;
let plan: Plan;
let training: TrainingSetup;
let data: string;

beforeAll(async () => {
  await selectBackend();
  root = mkdtempSync(join(tmpdir(), 'shoal-bad-data-'));
  const modelFile = await saveLayersModel(constrainedMlp(), join(root, 'model'));
  data = join(root, 'data');
  writeNpyData(data, { features: { shape: [6], kind: 'float' }, probs: { shape: [], kind: { classes: 3 } } }, 4000);
  copyFileSync(join(data, 'features.npy'), join(root, 'features.good.npy'));
  model = loadModel(modelFile);
  plan = parsePlan({ ...presetPlan(model, 'pp2-dp1', { globalBatch: 16, microBatches: 2, seed: 3, optimizer: { kind: 'sgd', learningRate: 0.01, momentum: 0.9 } }), model: modelFile });
  training = trainingSetupFrom({ data }, model, plan.seed);
}, 60_000);
afterAll(() => rmSync(root, { recursive: true, force: true }));

function job(tag: string, events: JobEvent[], onEvent: (e: JobEvent, job: LocalJob) => void = () => {}, resumeFrom?: string): LocalJob {
  const created: LocalJob = new LocalJob({
    model, plan, training, agents: 2, steps: STEPS, runDir: join(root, tag), checkpointEverySteps: 4, evalEverySteps: STEPS, profile: false, timelineEverySteps: 0, resumeFrom,
    onEvent: (e) => {
      events.push(e);
      onEvent(e, created);
    },
  });
  return created;
}

it('a .npy file truncated under a running job fails it with the file, the rows and the way back; fixed, the job resumes to the uninterrupted result', async () => {
  const reference = job('reference', []);
  await reference.start();
  await reference.exited();
  const expected = readParams(join(root, 'reference', 'checkpoints'));

  const events: JobEvent[] = [];
  let cutAfter = -1;
  const broken = job('broken', events, (e) => {
    if (e.type === 'step' && e.step === 9 && cutAfter < 0) {
      cutAfter = e.step;
      truncateSync(join(data, 'features.npy'), 1000);
    }
  });
  const error = await broken.start().then(
    () => undefined,
    (err: Error) => err,
  );
  await broken.exited();
  expect(cutAfter).toBe(9);
  expect(error, 'the job fails: it cannot train on a file that lost its rows').toBeDefined();
  expect(error!.message).toMatch(/features\.npy: truncated while reading rows \d+\.\.\d+ \(did the file change under the run\?\)/);
  expect(error!.message).toMatch(/shoal resume/);
  const failed = events.find((e) => e.type === 'status' && e.state === 'failed');
  expect(failed?.type === 'status' && failed.message).toMatch(/features\.npy/);
  const checkpoint = latestCheckpoint(join(root, 'broken', 'checkpoints'));
  expect(checkpoint, 'the checkpoints written before the bad read are kept').toMatch(/step-00000(08|12)\.ckpt$/);

  // The user puts the file back and resumes.
  copyFileSync(join(root, 'features.good.npy'), join(data, 'features.npy'));
  const resumedEvents: JobEvent[] = [];
  const resumed = job('resumed', resumedEvents, undefined, checkpoint);
  await resumed.start();
  await resumed.exited();
  expect(resumedEvents.some((e) => e.type === 'checkpoint' && e.action === 'restored')).toBe(true);
  const params = readParams(join(root, 'resumed', 'checkpoints'));
  for (const [name, values] of expected) expect(maxRelativeError(params.get(name)!, values), name).toBeLessThanOrEqual(1e-6);
}, 360_000);
