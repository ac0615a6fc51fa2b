import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { selectBackend } from '../../agents/backend/selectBackend.js';
import { exportWeights } from '../../engine/node/export/exportWeights.js';
import { LocalJob } from '../../engine/node/jobs/localJob.js';
import { loadModel } from '../../engine/node/modelRef.js';
import { trainingSetupFrom } from '../../engine/node/trainingOptions.js';
import { executionSupport } from '../../engine/plan/executionSupport.js';
import { parsePlan } from '../../engine/plan/plan.js';
import { presetPlan } from '../../engine/plan/presets.js';
import { REFUSED_LAYER_CLASSES } from '../../engine/plan/refusedLayers.js';
import { tfjsLayerLibrary } from '../../engine/wire/tfjsLayerLibrary.js';
import { openNpy } from '../../engine/wire/data/npy.js';
import { CLASS_MODELS } from '../support/classModels.js';
import { loadLayersModel, saveLayersModel, tf, tfl, writeNpyData } from '../support/userModels.js';
import { maxRelativeError, maxUpdateError } from './paramsFile.js';

/**
 * Every layer class tfjs-layers 4.22 registers either trains on an agent exactly as tfjs's own
 * `model.fit` trains it (one agent, file order, the same SGD steps: 1e-4 of each weight and 1% of its
 * update), or is refused before any process starts with the reason README.md's table gives. The
 * classes are batched into four tiny models (test/support/classModels.ts) so the whole check costs
 * four agent runs.
 */
const STEPS = 3;
const BATCH = 8;
const LR = 0.05;
let root: string;
const built: Array<{ name: string; modelFile: string; data: string; inputs: string[] }> = [];

beforeAll(async () => {
  await selectBackend();
  root = mkdtempSync(join(tmpdir(), 'shoal-tfjs-classes-'));
  for (const make of Object.values(CLASS_MODELS)) {
    const { name, model, inputs, tokens } = make();
    const modelFile = await saveLayersModel(model, join(root, name));
    const arrays: Parameters<typeof writeNpyData>[1] = { head: { shape: [1], kind: 'float' } };
    for (const [input, shape] of Object.entries(inputs)) arrays[input] = { shape, kind: tokens?.[input] ? { classes: tokens[input] } : 'float' };
    // One input and one output read x.npy and y.npy; several read <layer>.npy.
    if (Object.keys(inputs).length === 1) {
      const [only] = Object.keys(inputs);
      arrays.x = arrays[only];
      arrays.y = arrays.head;
      delete arrays[only];
      delete arrays.head;
    }
    writeNpyData(join(root, name, 'data'), arrays, STEPS * BATCH);
    built.push({ name, modelFile, data: join(root, name, 'data'), inputs: Object.keys(inputs) });
  }
}, 120_000);
afterAll(() => rmSync(root, { recursive: true, force: true }));

/** Every `class_name` in a model file's topology: layers, wrapped layers and RNN cells. */
function classesIn(modelFile: string): Set<string> {
  const found = new Set<string>();
  const walk = (v: unknown): void => {
    if (Array.isArray(v)) v.forEach(walk);
    else if (v && typeof v === 'object') {
      const o = v as Record<string, unknown>;
      if (typeof o.class_name === 'string') found.add(o.class_name);
      Object.values(o).forEach(walk);
    }
  };
  walk(JSON.parse(readFileSync(modelFile, 'utf8')).modelTopology);
  return found;
}

/** The first rows of a data folder's .npy file as a tensor (what Shoal reads, in file order). */
function rows(file: string, n: number): tf.Tensor {
  const a = openNpy(file);
  const out = new Float32Array(n * a.rowSize);
  a.readRange(0, n, out);
  a.close();
  return tf.tensor(out, [n, ...a.shape.slice(1)]);
}

const passed = new Set<string>();

describe('every tfjs-layers class Shoal trains equals model.fit on one agent', () => {
  for (const name of Object.keys(CLASS_MODELS)) {
    it(`${name}: one agent, file order, SGD, equals model.fit (1e-4 per weight, 1% of the update)`, async () => {
      const { modelFile, data, inputs } = built.find((b) => b.name === name)!;
      const model = loadModel(modelFile);
      expect(model.layers.filter((l) => l.spec.kind === 'opaque').map((l) => l.id)).toEqual([]);
      const base = presetPlan(model, 'pp1-dp1', { globalBatch: BATCH, microBatches: 1, seed: 3, optimizer: { kind: 'sgd', learningRate: LR, momentum: 0 } });
      const plan = parsePlan({ ...base, model: modelFile, shuffle: false });
      expect(executionSupport(plan, model).filter((d) => d.severity === 'error')).toEqual([]);
      const training = trainingSetupFrom({ data, loss: 'mse' }, model, plan.seed);
      const runDir = join(root, `${name}-run`);
      const job = new LocalJob({ model, plan, training, agents: 1, steps: STEPS, runDir, profile: false, onEvent: () => {} });
      await job.start();
      await job.exited();
      const shoal = await loadLayersModel(join(exportWeights(runDir, join(runDir, 'export')).dir, 'model.json'));

      const reference = await loadLayersModel(modelFile);
      const initial = new Map(reference.weights.map((w) => [w.originalName, (w.read().dataSync() as Float32Array).slice()]));
      reference.compile({ optimizer: tf.train.sgd(LR), loss: 'meanSquaredError' });
      const n = STEPS * BATCH;
      const x = inputs.length === 1 ? rows(join(data, 'x.npy'), n) : inputs.map((i) => rows(join(data, `${i}.npy`), n));
      const y = rows(join(data, inputs.length === 1 ? 'y.npy' : 'head.npy'), n);
      await reference.fit(x, y, { batchSize: BATCH, epochs: 1, shuffle: false, verbose: 0 });
      let moved = 0;
      for (const w of reference.weights) {
        const theirs = w.read().dataSync() as Float32Array;
        const ours = shoal.weights.find((v) => v.originalName === w.originalName)!.read().dataSync() as Float32Array;
        expect(maxRelativeError(ours, theirs), w.originalName).toBeLessThan(1e-4);
        if (w.trainable) {
          const start = initial.get(w.originalName)!;
          if (maxRelativeError(theirs, start) > 1e-6) {
            moved++;
            expect(maxUpdateError(ours, theirs, start), `${w.originalName} (of its update)`).toBeLessThan(0.01);
          }
        }
      }
      expect(moved).toBeGreaterThan(reference.trainableWeights.length / 2);
      for (const c of classesIn(modelFile)) passed.add(c);
    }, 240_000);
  }
});

describe('the registry enumerated: each class has a passing parity case or a measured refusal', () => {
  it('every tfjs-layers 4.22 layer class is covered, and each refusal is in README.md and refused before training', () => {
    // The package index registers 65 layer classes. Importing Shoal's MultiHeadAttention (which this
    // process does, through test/support/userModels.ts) adds tfjs's deep-imported EinsumDense and
    // MultiHeadAttention: Shoal's subclass is held to every plan by userModels.test.ts.
    const extra = ['EinsumDense', 'MultiHeadAttention'];
    const classes = tfjsLayerLibrary.classNames().filter((c) => !extra.includes(c));
    // The classes the issue names, and the registry as tfjs-layers 4.22 ships it (65 layer classes).
    for (const c of ['Dot', 'RepeatVector', 'Masking', 'PReLU', 'Rescaling', 'Conv3D', 'MaxPooling3D', 'AveragePooling3D', 'ConvLSTM2D', 'GaussianNoise', 'GaussianDropout', 'AlphaDropout']) expect(classes).toContain(c);
    expect(classes.length).toBe(65);
    const readme = readFileSync(join(__dirname, '..', '..', 'README.md'), 'utf8');
    const uncovered: string[] = [];
    for (const c of classes) {
      const refused = REFUSED_LAYER_CLASSES[c];
      if (passed.has(c)) {
        expect(refused, `${c} passes parity but is refused`).toBeUndefined();
        continue;
      }
      if (!refused) {
        uncovered.push(c);
        continue;
      }
      expect(readme, `README.md's table of refused classes lacks ${c}`).toMatch(new RegExp(`^\\| \`${c}\` \\|`, 'm'));
    }
    expect(uncovered, 'classes with neither a passing parity case nor a refusal').toEqual([]);
  });

  it('a refused class is refused before any process starts, naming the layer, the class and the reason', async () => {
    const x = tfl.input({ shape: [3], name: 'x' });
    const noisy = tfl.layers.gaussianNoise({ stddev: 0.1, name: 'noisy' }).apply(x) as tfl.SymbolicTensor;
    const out = tfl.layers.dense({ units: 1, name: 'out' }).apply(noisy) as tfl.SymbolicTensor;
    const modelFile = await saveLayersModel(tfl.model({ inputs: x, outputs: out }), join(root, 'refused'));
    const model = loadModel(modelFile);
    const errors = executionSupport(parsePlan({ ...presetPlan(model, 'pp1-dp1'), model: modelFile }), model).filter((d) => d.severity === 'error');
    expect(errors.map((d) => [d.code, d.where.layer])).toEqual([['layer-class-refused', 'noisy']]);
    expect(errors[0].message).toMatch(/GaussianNoise.*random in training/);
  });
});
