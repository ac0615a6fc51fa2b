import { mkdirSync, mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { selectBackend } from '../../agents/backend/selectBackend.js';
import { loadModel } from '../../engine/node/modelRef.js';
import type { Plan } from '../../engine/plan/plan.js';
import { writeNpy } from '../../engine/wire/data/npy.js';
import { readLayersModel } from '../../engine/wire/layersModelFile.js';
import { maskedRecurrent, paddedTokens } from '../support/optionModels.js';
import { npyTensor, trainUserModel, userPlan } from '../support/userModelRuns.js';
import { loadLayersModel, saveLayersModel, tf, type tfl } from '../support/userModels.js';
import { maxRelativeError, maxUpdateError } from './paramsFile.js';

/**
 * Keras masks: Embedding(mask_zero=true) masks the padding of token ids, the GRUs skip the masked
 * steps and Concatenate merges the masks, as in tfjs's model.fit — one agent equals model.fit, and
 * pp2-dp2 with both masked tensors crossing the cut equals one agent.
 */
const K = 4;
const BATCH = 16;
const LR = 0.2;
let root: string;
const files: Record<string, { model: string; data: string }> = {};
let runs = 0;

beforeAll(async () => {
  await selectBackend();
  root = mkdtempSync(join(tmpdir(), 'shoal-masks-'));
  const data = join(root, 'data');
  mkdirSync(data, { recursive: true });
  writeNpy(join(data, 'x.npy'), paddedTokens(K * BATCH, 6), [K * BATCH, 6]);
  writeNpy(join(data, 'y.npy'), Int32Array.from({ length: K * BATCH }, (_, i) => (i * 7) % 3 === 0 ? 1 : 0), [K * BATCH]);
  const make = async (name: string, model: tfl.LayersModel) => {
    files[name] = { model: await saveLayersModel(model, join(root, name)), data };
  };
  await make('masked', maskedRecurrent(true));
  await make('unmasked', maskedRecurrent(false));
}, 120_000);
afterAll(() => rmSync(root, { recursive: true, force: true }));

async function shoal(name: string, preset: string, agents: number, extra: Partial<Plan> = {}) {
  const model = loadModel(files[name].model);
  return trainUserModel(files[name].model, { data: files[name].data }, userPlan(model, preset, { optimizer: { kind: 'sgd', learningRate: LR, momentum: 0 }, ...extra }), agents, join(root, `${name}-${preset}-${(runs += 1)}`), K);
}

const initialOf = (name: string) => new Map([...readLayersModel(files[name].model).weights!].map(([w, v]) => [w, v.values]));

async function modelFit(name: string): Promise<{ weights: Map<string, Float32Array>; losses: number[] }> {
  const model = await loadLayersModel(files[name].model);
  model.compile({ optimizer: tf.train.sgd(LR), loss: 'sparseCategoricalCrossentropy' });
  const losses: number[] = [];
  await model.fit(npyTensor(files[name].data, 'x'), npyTensor(files[name].data, 'y'), { batchSize: BATCH, epochs: 1, shuffle: false, verbose: 0, callbacks: { onBatchEnd: async (_b, logs) => void losses.push(logs!.loss as number) } });
  return { weights: new Map(model.weights.map((w) => [w.originalName, (w.read().dataSync() as Float32Array).slice()])), losses };
}

describe('Keras masks propagate as in model.fit', () => {
  it('one agent equals tfjs model.fit on Embedding(mask_zero) → GRU → Concatenate → GRU; unmasked, the weights would differ', async () => {
    const run = await shoal('masked', 'pp1-dp1', 1, { microBatches: 1 });
    const reference = await modelFit('masked');
    const initial = initialOf('masked');
    for (const [weight, values] of reference.weights) {
      expect(maxRelativeError(run.params.get(weight)!, values), weight).toBeLessThan(1e-4);
      expect(maxUpdateError(run.params.get(weight)!, values, initial.get(weight)!), weight).toBeLessThan(0.01);
    }
    run.losses.forEach((loss, step) => expect(Math.abs(loss - reference.losses[step]), `step ${step}`).toBeLessThan(1e-5 * reference.losses[step]));
    // The same weights and data without mask_zero train differently: the mask is what made them equal.
    const unmasked = await modelFit('unmasked');
    const differs = [...reference.weights].filter(([w, v]) => maxUpdateError(unmasked.weights.get(w)!, v, initial.get(w)!) > 0.05);
    expect(differs.length).toBeGreaterThanOrEqual(3);
  }, 240_000);

  it('pp2-dp2 with the embedding and the first GRU (values and masks) crossing the cut equals one agent', async () => {
    const model = loadModel(files.masked.model);
    const order = model.layers.map((l) => l.id);
    const cut = order.indexOf('m_gru_a') + 1;
    const base = userPlan(model, 'pp2-dp2');
    const stages = [{ ...base.stages[0], layers: order.slice(0, cut) }, { ...base.stages[1], layers: order.slice(cut) }];
    const single = await shoal('masked', 'pp1-dp1', 1, { virtualNodes: { total: 2 } });
    const hybrid = await shoal('masked', 'pp2-dp2', 4, { stages, schedule: '1f1b' });
    const initial = initialOf('masked');
    for (const [weight, values] of single.params) {
      expect(maxRelativeError(hybrid.params.get(weight)!, values), weight).toBeLessThan(1e-4);
      expect(maxUpdateError(hybrid.params.get(weight)!, values, initial.get(weight)!), weight).toBeLessThan(0.01);
    }
  }, 240_000);
});
