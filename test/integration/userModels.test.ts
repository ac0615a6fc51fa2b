import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { selectBackend } from '../../agents/backend/selectBackend.js';
import type { ModelGraph } from '../../engine/model/graph.js';
import { runResume } from '../../engine/node/commands/resume.js';
import { exportWeights } from '../../engine/node/export/exportWeights.js';
import { LocalJob } from '../../engine/node/jobs/localJob.js';
import { loadModel } from '../../engine/node/modelRef.js';
import { trainingSetupFrom } from '../../engine/node/trainingOptions.js';
import { parsePlan, type Plan } from '../../engine/plan/plan.js';
import { presetPlan } from '../../engine/plan/presets.js';
import { readLayersModel } from '../../engine/wire/layersModelFile.js';
import { openNpy } from '../../engine/wire/data/npy.js';
import { readCheckpoint } from '../../engine/wire/checkpointFile.js';
import { latestCheckpoint } from '../../engine/node/jobs/runStore.js';
import { attentionBlock, biLstmClassifier, constrainedMlp, freezeNested, layerZoo, loadLayersModel, resnetBlock, saveLayersModel, tf, tfl, twoInTwoOut, writeNpyData, TWO_IN_TWO_OUT_ARRAYS } from '../support/userModels.js';
import { maxRelativeError, readParams } from './paramsFile.js';

/**
 * Users' own models on real agent processes: (1) every synchronous plan gives the one-process
 * parameters (batch-norm statistics included) for a ResNet-style block, a BiLSTM over token ids, and a
 * two-input two-output model with a shared layer, a skip across the cut and dropout; (2) Shoal on one
 * agent equals tfjs's own `model.fit` on the same model, weights and data in file order.
 */
const K = 4;
let root: string;
const files: Record<string, { model: string; data: string }> = {};

beforeAll(async () => {
  await selectBackend();
  root = mkdtempSync(join(tmpdir(), 'shoal-user-models-'));
  const make = async (name: string, model: tfl.LayersModel, arrays: Parameters<typeof writeNpyData>[1]) => {
    files[name] = { model: await saveLayersModel(model, join(root, name)), data: join(root, name, 'data') };
    writeNpyData(files[name].data, arrays, 64);
  };
  await make('resnet', resnetBlock(), { x: { shape: [8, 8, 2], kind: 'float' }, y: { shape: [], kind: { classes: 3 } } });
  await make('lstm', biLstmClassifier(), { x: { shape: [6], kind: { classes: 20 } }, y: { shape: [], kind: { classes: 2 } } });
  await make('two', twoInTwoOut(), TWO_IN_TWO_OUT_ARRAYS);
  await make('attention', await attentionBlock(), { x: { shape: [4, 6], kind: 'float' }, y: { shape: [], kind: { classes: 2 } } });
  await make('zoo', layerZoo(), { x: { shape: [8, 8, 3], kind: 'float' }, y: { shape: [], kind: { classes: 2 } } });
  await make('constrained', constrainedMlp(), { x: { shape: [6], kind: 'float' }, y: { shape: [], kind: { classes: 3 } } });
  freezeNested(files.zoo.model, 'frozen_block');
}, 120_000);
afterAll(() => rmSync(root, { recursive: true, force: true }));

async function train(name: string, plan: Plan, agents: number, tag: string, steps = K): Promise<string> {
  const model = loadModel(files[name].model);
  const training = trainingSetupFrom({ data: files[name].data }, model, plan.seed);
  const runDir = join(root, `${name}-${tag}`);
  const job = new LocalJob({ model, plan, training, agents, steps, runDir, profile: false, onEvent: () => {} });
  await job.start();
  await job.exited();
  return runDir;
}

function planFor(model: ModelGraph, preset: string, extra: Partial<Plan>): Plan {
  const base = presetPlan(model, preset, { globalBatch: 16, microBatches: 2, seed: 7, optimizer: { kind: 'sgd', learningRate: 0.05, momentum: 0.9 } });
  return parsePlan({ ...base, model: model.source!.modelFile, ...extra });
}

/**
 * Synchronous plans that fit 4 processes without operator sharding (which imported models do not
 * have), each against one process with the same slicing: the same virtual nodes × micro-batches.
 */
const PLANS: Array<{ preset: string; agents: number; extra: Partial<Plan> }> = [
  { preset: 'pp2-dp2', agents: 4, extra: { schedule: '1f1b', zero: 1 } },
  { preset: 'pp1-dp4', agents: 4, extra: { zero: 2 } },
  { preset: 'pp4-dp1', agents: 4, extra: { schedule: '1f1b' } },
  { preset: 'pp2-dp1', agents: 2, extra: { virtualNodes: { total: 2 }, gradientClipNorm: 0.5 } },
];

describe('a user model trains the same under every synchronous plan', () => {
  const references = new Map<string, Map<string, Float32Array>>();
  /** One process with the plan's slicing (virtual nodes × micro-batches), trained once per slicing. */
  async function reference(name: string, plan: Plan): Promise<Map<string, Float32Array>> {
    const total = plan.virtualNodes?.total ?? plan.stages[0].dataParallel;
    const key = `${name}/${total}/${plan.gradientClipNorm ?? 'none'}`;
    if (!references.has(key)) {
      const model = loadModel(files[name].model);
      const single = planFor(model, 'pp1-dp1', { virtualNodes: { total }, ...(plan.gradientClipNorm ? { gradientClipNorm: plan.gradientClipNorm } : {}) });
      references.set(key, readParams(join(await train(name, single, 1, `single-${total}-${plan.gradientClipNorm ?? 0}`), 'checkpoints')));
    }
    return references.get(key)!;
  }

  for (const name of ['resnet', 'lstm', 'two', 'attention', 'zoo']) {
    for (const { preset, agents, extra } of PLANS) {
      it(`${name}: ${preset} ${JSON.stringify(extra)} equals one process with the same slicing`, async () => {
        const model = loadModel(files[name].model);
        const plan = planFor(model, preset, extra);
        const expected = await reference(name, plan);
        const got = readParams(join(await train(name, plan, agents, `${preset}-${JSON.stringify(extra).replace(/\W+/g, '')}`), 'checkpoints'));
        expect([...got.keys()].sort()).toEqual([...expected.keys()].sort());
        for (const [weight, values] of expected) expect(maxRelativeError(got.get(weight)!, values), weight).toBeLessThan(1e-4);
        // Training moved the weights away from the file's.
        const initial = readLayersModel(files[name].model).weights!;
        const moved = [...expected].filter(([w, v]) => maxRelativeError(v, initial.get(w)!.values) > 1e-3);
        expect(moved.length).toBeGreaterThan(0);
      }, 240_000);
    }
  }
});

describe('checkpoints of a user model', () => {
  it('shoal resume continues a run to the weights of an uninterrupted one, batch-norm statistics and momentum included', async () => {
    const model = loadModel(files.resnet.model);
    const plan = planFor(model, 'pp2-dp1', {});
    const whole = readParams(join(await train('resnet', plan, 2, 'whole'), 'checkpoints'));
    const half = await train('resnet', plan, 2, 'half', K / 2);
    // The run's data and losses come back from its job.json; the model from the checkpoint's path.
    await runResume([half, '--steps', String(K), '--cluster', 'local:2']);
    const resumed = readParams(join(half, 'checkpoints'));
    expect([...resumed.keys()].sort()).toEqual([...whole.keys()].sort());
    for (const [weight, values] of whole) expect(maxRelativeError(resumed.get(weight)!, values), weight).toBeLessThan(1e-5);
  }, 240_000);
});

describe('frozen layers', () => {
  it('a nested model the file marks frozen keeps its weights and gets no optimizer state', async () => {
    const model = loadModel(files.zoo.model);
    const runDir = await train('zoo', planFor(model, 'pp2-dp1', { optimizer: { kind: 'adam', learningRate: 0.01, beta1: 0.9, beta2: 0.999, epsilon: 1e-7 } }), 2, 'frozen');
    const { header, body } = readCheckpoint(latestCheckpoint(join(runDir, 'checkpoints'))!);
    const initial = readLayersModel(files.zoo.model).weights!;
    for (const name of ['frozen_dense/kernel', 'frozen_dense/bias']) {
      const saved = header.tensors.filter((t) => t.name === name);
      expect(saved.map((t) => t.slot ?? 'value'), name).toEqual(['value']);
      expect(maxRelativeError(body.subarray(saved[0].offset, saved[0].offset + saved[0].length), initial.get(name)!.values), name).toBe(0);
    }
    expect(header.tensors.filter((t) => t.name === 'zoo_out/kernel').map((t) => t.slot ?? 'value').sort()).toEqual(['m', 'v', 'value']);
  }, 240_000);
});

describe('Shoal on one agent equals tfjs model.fit', () => {
  for (const name of ['resnet', 'lstm', 'zoo']) {
    it(`${name}: shoal train --shuffle false, then export, equals model.fit(shuffle: false)`, async () => {
      const model = loadModel(files[name].model);
      const plan = parsePlan({ ...planFor(model, 'pp1-dp1', {}), microBatches: 1, shuffle: false, optimizer: { kind: 'sgd', learningRate: 0.05, momentum: 0 } });
      const runDir = await train(name, plan, 1, 'parity');
      const exported = exportWeights(runDir, join(runDir, 'export'));
      const shoal = await loadLayersModel(join(exported.dir, 'model.json'));

      const reference = await loadLayersModel(files[name].model);
      // Keras would keep the nested model the file marks frozen frozen; tfjs's loader does not read it.
      if (name === 'zoo') reference.getLayer('frozen_block').trainable = false;
      // The resnet's head is a softmax: Keras's loss on probabilities. The LSTM's is linear: Shoal reads
      // it as logits (no softmax of its own), which tfjs spells as softmax cross-entropy.
      const classes = (reference.outputs[0].shape as number[])[1];
      const fromLogits = (yTrue: tf.Tensor, yPred: tf.Tensor) => tf.losses.softmaxCrossEntropy(yTrue, yPred);
      reference.compile({ optimizer: tf.train.sgd(0.05), loss: name === 'lstm' ? fromLogits : 'sparseCategoricalCrossentropy' });
      const data = readLayersModel(files[name].model); // topology untouched by the export:
      expect(JSON.stringify(readLayersModel(join(exported.dir, 'model.json')).topology)).toBe(JSON.stringify(data.topology));
      const { x, y: labels } = npyTensors(files[name].data, K * plan.globalBatch);
      const y = name === 'lstm' ? tf.oneHot(tf.cast(tf.reshape(labels, [-1]), 'int32'), classes) : labels;
      await reference.fit(x, y, { batchSize: plan.globalBatch, epochs: 1, shuffle: false, verbose: 0 });
      for (const w of reference.weights) {
        const theirs = w.read().dataSync() as Float32Array;
        const ours = shoal.weights.find((v) => v.originalName === w.originalName)!.read().dataSync() as Float32Array;
        expect(maxRelativeError(ours, theirs), w.originalName).toBeLessThan(1e-4);
      }
      // And the exported model predicts what the trained weights predict in tfjs.
      const probe = x.slice(0, 4);
      expect(maxRelativeError((shoal.predict(probe) as tf.Tensor).dataSync() as Float32Array, (reference.predict(probe) as tf.Tensor).dataSync() as Float32Array)).toBeLessThan(1e-4);
    }, 240_000);
  }
});

describe('weight constraints', () => {
  it('max-norm, unit-norm and non-negative constraints project the weights after every update, as Keras does, on a pipeline', async () => {
    const model = loadModel(files.constrained.model);
    const lr = 0.5;
    const plan = parsePlan({ ...planFor(model, 'pp2-dp1', {}), shuffle: false, optimizer: { kind: 'sgd', learningRate: lr, momentum: 0 } });
    const runDir = await train('constrained', plan, 2, 'constraints');
    const shoal = await loadLayersModel(join(exportWeights(runDir, join(runDir, 'export')).dir, 'model.json'));

    // Keras's rule, written out: one SGD step per batch (tfjs's trainOnBatch), then each constrained weight projected.
    const { x, y } = npyTensors(files.constrained.data, K * plan.globalBatch);
    const keras = async (project: boolean) => {
      const reference = await loadLayersModel(files.constrained.model);
      reference.compile({ optimizer: tf.train.sgd(lr), loss: 'sparseCategoricalCrossentropy' });
      for (let s = 0; s < K; s++) {
        const rows = (t: tf.Tensor) => t.slice(s * plan.globalBatch, plan.globalBatch);
        await reference.trainOnBatch(rows(x), rows(y));
        if (project) for (const w of reference.weights) if (w.constraint) w.write(w.constraint.apply(w.read()));
      }
      return reference;
    };
    const reference = await keras(true);
    const unconstrained = await keras(false);
    let bites = 0;
    for (const w of reference.weights) {
      const theirs = w.read().dataSync() as Float32Array;
      const ours = shoal.weights.find((v) => v.originalName === w.originalName)!.read().dataSync() as Float32Array;
      expect(maxRelativeError(ours, theirs), w.originalName).toBeLessThan(1e-4);
      const free = unconstrained.weights.find((v) => v.originalName === w.originalName)!.read().dataSync() as Float32Array;
      if (maxRelativeError(free, theirs) > 1e-2) bites++;
    }
    // The constraints changed the result (else this test could not tell them applied from ignored).
    expect(bites).toBeGreaterThanOrEqual(2);
    const hiddenNorms = tf.tidy(() => tf.sqrt(tf.sum(tf.square(shoal.getLayer('hidden').getWeights()[0]), 0)).dataSync());
    expect(Math.max(...hiddenNorms)).toBeLessThanOrEqual(0.4 + 1e-6);
  }, 240_000);
});

/** The first `n` samples of x.npy and y.npy as tensors (the data Shoal read, in file order). */
function npyTensors(dir: string, n: number): { x: tf.Tensor; y: tf.Tensor } {
  const read = (file: string) => {
    const a = openNpy(join(dir, file));
    const out = new Float32Array(n * a.rowSize);
    a.readRange(0, n, out);
    a.close();
    return tf.tensor(out, [n, ...a.shape.slice(1)]);
  };
  return { x: read('x.npy'), y: read('y.npy') };
}
