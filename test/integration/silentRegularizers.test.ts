import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { selectBackend } from '../../agents/backend/selectBackend.js';
import { loadModel } from '../../engine/node/modelRef.js';
import { readLayersModel } from '../../engine/wire/layersModelFile.js';
import { regularizedMlp, regularizedSharedAndRecurrent } from '../support/optionModels.js';
import { npyTensor, trainUserModel, userPlan } from '../support/userModelRuns.js';
import { loadLayersModel, saveLayersModel, tf, tfl, writeNpyData } from '../support/userModels.js';
import { maxRelativeError, maxUpdateError } from './paramsFile.js';

/**
 * Weight regularizers (kernel_regularizer, bias_regularizer; L1, L2, L1L2) are part of the loss, as
 * in tfjs's model.fit: one agent equals model.fit weight for weight and in the reported loss, and
 * pp2-dp2 (each stage its own layers' penalty, counted once per step over replicas and
 * micro-batches) equals one agent.
 */
const K = 4;
const BATCH = 16;
let root: string;
const files: Record<string, { model: string; data: string }> = {};

beforeAll(async () => {
  await selectBackend();
  root = mkdtempSync(join(tmpdir(), 'shoal-regularizers-'));
  const make = async (name: string, model: tfl.LayersModel, arrays: Parameters<typeof writeNpyData>[1]) => {
    files[name] = { model: await saveLayersModel(model, join(root, name)), data: join(root, name, 'data') };
    writeNpyData(files[name].data, arrays, K * BATCH);
  };
  await make('mlp', regularizedMlp(), { x: { shape: [6], kind: 'float' }, y: { shape: [], kind: { classes: 3 } } });
  await make('shared', regularizedSharedAndRecurrent(), { x: { shape: [4, 3], kind: 'float' }, y: { shape: [], kind: { classes: 2 } } });
}, 120_000);
afterAll(() => rmSync(root, { recursive: true, force: true }));

const LR = 0.1;
let runs = 0;

async function shoal(name: string, preset: string, agents: number, extra: Parameters<typeof userPlan>[2] = {}) {
  const model = loadModel(files[name].model);
  return trainUserModel(files[name].model, { data: files[name].data }, userPlan(model, preset, { optimizer: { kind: 'sgd', learningRate: LR, momentum: 0 }, ...extra }), agents, join(root, `${name}-${preset}-${(runs += 1)}`), K);
}

function expectSameWeights(got: Map<string, Float32Array>, expected: Map<string, Float32Array>, initial: Map<string, Float32Array>, tolerance: { relative: number; update: number }) {
  expect([...got.keys()].sort()).toEqual([...expected.keys()].sort());
  for (const [weight, values] of expected) {
    expect(maxRelativeError(got.get(weight)!, values), weight).toBeLessThan(tolerance.relative);
    expect(maxUpdateError(got.get(weight)!, values, initial.get(weight)!), weight).toBeLessThan(tolerance.update);
  }
}

const initialOf = (name: string) => new Map([...readLayersModel(files[name].model).weights!].map(([w, v]) => [w, v.values]));
const weightsOf = (model: tfl.LayersModel) => new Map(model.weights.map((w) => [w.originalName, (w.read().dataSync() as Float32Array).slice()]));

describe('weight regularizers are part of the loss', () => {
  it('one agent equals tfjs model.fit (weights and reported loss); without the penalty the weights would differ', async () => {
    const run = await shoal('mlp', 'pp1-dp1', 1, { microBatches: 1 });
    const x = npyTensor(files.mlp.data, 'x');
    const y = npyTensor(files.mlp.data, 'y');
    const fit = async (topology?: unknown) => {
      const reference = await loadLayersModel(files.mlp.model);
      const model = topology ? await tfl.models.modelFromJSON({ modelTopology: topology as tf.io.ModelJSON['modelTopology'] }) : reference;
      if (topology) model.setWeights(reference.getWeights());
      model.compile({ optimizer: tf.train.sgd(LR), loss: 'sparseCategoricalCrossentropy' });
      const losses: number[] = [];
      await model.fit(x, y, { batchSize: BATCH, epochs: 1, shuffle: false, verbose: 0, callbacks: { onBatchEnd: async (_b, logs) => void losses.push(logs!.loss as number) } });
      return { weights: weightsOf(model), losses };
    };
    const reference = await fit();
    expectSameWeights(run.params, reference.weights, initialOf('mlp'), { relative: 1e-4, update: 0.01 });
    expect(run.losses).toHaveLength(K);
    run.losses.forEach((loss, step) => expect(Math.abs(loss - reference.losses[step]), `step ${step}`).toBeLessThan(1e-5 * reference.losses[step]));

    // The same model with its regularizers removed trains measurably differently: the test can tell.
    const plain = JSON.parse(JSON.stringify(readLayersModel(files.mlp.model).topology).replace(/"(kernel|bias)_regularizer":\{[^}]*\}\}/g, '"$1_regularizer":null'));
    expect(JSON.stringify(plain)).not.toContain('L1L2');
    const unregularized = await fit(plain);
    const differs = [...reference.weights].filter(([w, v]) => maxUpdateError(unregularized.weights.get(w)!, v, initialOf('mlp').get(w)!) > 0.05);
    expect(differs.length).toBeGreaterThanOrEqual(3);
    expect(unregularized.losses[0]).toBeLessThan(reference.losses[0] - 0.01);
  }, 240_000);

  it('pp2-dp2 (1f1b, each stage its own penalty, once per step) equals one agent with the same slicing', async () => {
    const single = await shoal('mlp', 'pp1-dp1', 1, { virtualNodes: { total: 2 } });
    const hybrid = await shoal('mlp', 'pp2-dp2', 4, { schedule: '1f1b' });
    expectSameWeights(hybrid.params, single.params, initialOf('mlp'), { relative: 1e-4, update: 0.01 });
    hybrid.losses.forEach((loss, step) => expect(Math.abs(loss - single.losses[step]), `step ${step}`).toBeLessThan(1e-5 * single.losses[step]));
  }, 240_000);

  it('a shared layer counts once and an LSTM cell\'s regularizers count, as in Keras: one agent and pp2-dp2', async () => {
    // The reference: tfjs's own optimizer over tfjs's cross-entropy plus each penalty tfjs built, once.
    const reference = await loadLayersModel(files.shared.model);
    const lstm = reference.getLayer('reg_lstm') as unknown as { cell: tfl.layers.Layer };
    const penalties = [...lstm.cell.losses, ...reference.getLayer('reg_shared').losses];
    expect(penalties).toHaveLength(4);
    const x = npyTensor(files.shared.data, 'x');
    const y = tf.oneHot(tf.cast(tf.reshape(npyTensor(files.shared.data, 'y'), [-1]), 'int32'), 2);
    const optimizer = tf.train.sgd(LR);
    const losses: number[] = [];
    for (let s = 0; s < K; s++) {
      const rows = (t: tf.Tensor) => t.slice(s * BATCH, BATCH);
      const loss = optimizer.minimize(() => tf.addN([tf.mean(tfl.metrics.categoricalCrossentropy(rows(y), reference.apply(rows(x), { training: true }) as tf.Tensor)), ...penalties.map((p) => p())]) as tf.Scalar, true)!;
      losses.push(loss.dataSync()[0]);
    }
    const expected = weightsOf(reference);
    const single = await shoal('shared', 'pp1-dp1', 1, { microBatches: 1 });
    expectSameWeights(single.params, expected, initialOf('shared'), { relative: 1e-4, update: 0.01 });
    single.losses.forEach((loss, step) => expect(Math.abs(loss - losses[step]), `step ${step}`).toBeLessThan(1e-5 * losses[step]));
    const hybrid = await shoal('shared', 'pp2-dp2', 4, { microBatches: 1 });
    expectSameWeights(hybrid.params, expected, initialOf('shared'), { relative: 1e-4, update: 0.01 });
  }, 240_000);

  it('an activity regularizer, which tfjs-layers cannot run, is refused by name when the model is built', async () => {
    const model = regularizedMlp();
    const file = await saveLayersModel(model, join(root, 'activity'));
    const doc = readLayersModel(file);
    const topology = JSON.parse(JSON.stringify(doc.topology).replace('"activity_regularizer":null', '"activity_regularizer":{"class_name":"L1L2","config":{"l1":0,"l2":0.01}}'));
    expect(JSON.stringify(topology)).toContain('"activity_regularizer":{');
    const { buildLayersModel } = await import('../../agents/exec/graph/layersModel.js');
    await expect(buildLayersModel(topology, 1)).rejects.toThrow(/activity regularizer/);
  });
});
