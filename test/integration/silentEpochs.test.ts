import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { selectBackend } from '../../agents/backend/selectBackend.js';
import { stepsPerEpoch } from '../../engine/data/dataOrder.js';
import { loadModel } from '../../engine/node/modelRef.js';
import type { Plan } from '../../engine/plan/plan.js';
import { readLayersModel } from '../../engine/wire/layersModelFile.js';
import { regularizedMlp } from '../support/optionModels.js';
import { npyTensor, trainUserModel, userPlan } from '../support/userModelRuns.js';
import { loadLayersModel, saveLayersModel, tf, writeNpyData } from '../support/userModels.js';
import { maxRelativeError, maxUpdateError } from './paramsFile.js';

/**
 * Epochs as model.fit takes them: 38 rows in batches of 16 are 3 steps an epoch (16, 16 and a last
 * step of 6 rows), the last step's loss the mean over its 6 rows. Two epochs: one agent equals
 * model.fit(epochs: 2), and pp2-dp2 — the 6 rows split 2, 2, 1, 1 over its virtual nodes ×
 * micro-batches — equals one agent with the same slicing (regularizers included).
 */
const ROWS = 38;
const BATCH = 16;
const EPOCHS = 2;
const LR = 0.1;
let root: string;
let file: { model: string; data: string };
let runs = 0;

beforeAll(async () => {
  await selectBackend();
  root = mkdtempSync(join(tmpdir(), 'shoal-epochs-'));
  file = { model: await saveLayersModel(regularizedMlp(), join(root, 'mlp')), data: join(root, 'mlp', 'data') };
  writeNpyData(file.data, { x: { shape: [6], kind: 'float' }, y: { shape: [], kind: { classes: 3 } } }, ROWS);
}, 120_000);
afterAll(() => rmSync(root, { recursive: true, force: true }));

const steps = () => EPOCHS * stepsPerEpoch(ROWS, userPlan(loadModel(file.model), 'pp1-dp1').globalBatch);

async function shoal(preset: string, agents: number, extra: Partial<Plan> = {}) {
  const model = loadModel(file.model);
  return trainUserModel(file.model, { data: file.data }, userPlan(model, preset, { optimizer: { kind: 'sgd', learningRate: LR, momentum: 0 }, ...extra }), agents, join(root, `run-${(runs += 1)}`), steps());
}

const initial = () => new Map([...readLayersModel(file.model).weights!].map(([w, v]) => [w, v.values]));

describe('an epoch whose rows are not a multiple of the batch', () => {
  it('--epochs 2 is 6 steps, as model.fit takes it; one agent equals model.fit(epochs: 2) with its smaller last batches', async () => {
    expect(steps()).toBe(6);
    const run = await shoal('pp1-dp1', 1, { microBatches: 1 });
    const reference = await loadLayersModel(file.model);
    reference.compile({ optimizer: tf.train.sgd(LR), loss: 'sparseCategoricalCrossentropy' });
    const losses: number[] = [];
    await reference.fit(npyTensor(file.data, 'x'), npyTensor(file.data, 'y'), { batchSize: BATCH, epochs: EPOCHS, shuffle: false, verbose: 0, callbacks: { onBatchEnd: async (_b, logs) => void losses.push(logs!.loss as number) } });
    expect(losses).toHaveLength(6);
    const start = initial();
    for (const w of reference.weights) {
      const theirs = w.read().dataSync() as Float32Array;
      expect(maxRelativeError(run.params.get(w.originalName)!, theirs), w.originalName).toBeLessThan(1e-4);
      expect(maxUpdateError(run.params.get(w.originalName)!, theirs, start.get(w.originalName)!), w.originalName).toBeLessThan(0.01);
    }
    run.losses.forEach((loss, step) => expect(Math.abs(loss - losses[step]), `step ${step}`).toBeLessThan(1e-5 * losses[step]));
  }, 240_000);

  it('pp2-dp2 (1f1b) splits the last step by rows and equals one agent with the same slicing', async () => {
    const single = await shoal('pp1-dp1', 1, { virtualNodes: { total: 2 } });
    const hybrid = await shoal('pp2-dp2', 4, { schedule: '1f1b' });
    const start = initial();
    for (const [weight, values] of single.params) {
      expect(maxRelativeError(hybrid.params.get(weight)!, values), weight).toBeLessThan(1e-4);
      expect(maxUpdateError(hybrid.params.get(weight)!, values, start.get(weight)!), weight).toBeLessThan(0.01);
    }
    hybrid.losses.forEach((loss, step) => expect(Math.abs(loss - single.losses[step]), `step ${step}`).toBeLessThan(1e-5 * single.losses[step]));
  }, 240_000);
});
