import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { selectBackend } from '../../agents/backend/selectBackend.js';
import { loadMnist } from '../../agents/data/mnist.js';
import { buildLayersModel } from '../../agents/exec/graph/layersModel.js';
import { kerasTopology } from '../../engine/model/export/kerasTopology.js';
import type { ModelGraph } from '../../engine/model/graph.js';
import { zooModel } from '../../engine/model/zoo.js';
import { LocalJob } from '../../engine/node/jobs/localJob.js';
import { loadModel } from '../../engine/node/modelRef.js';
import { trainingSetupFrom } from '../../engine/node/trainingOptions.js';
import { agentsNeeded, parsePlan, type Plan } from '../../engine/plan/plan.js';
import { presetPlan } from '../../engine/plan/presets.js';
import { openNpy } from '../../engine/wire/data/npy.js';
import type { TrainingSetup } from '../../engine/protocol/trainingSetup.js';
import { smallTransformer, SMALL_TRANSFORMER_ARRAYS } from '../support/smallTransformer.js';
import { loadLayersModel, saveLayersModel, tf, type tfl, writeNpyData } from '../support/userModels.js';
import { maxRelativeError, readParams } from './paramsFile.js';

/**
 * Operator sharding of any graph (Megatron's layout, found by pattern): a small transformer — an
 * embedding split by vocabulary, two attention blocks split by heads with LayerNorm and residual
 * Adds, their MLPs column- then row-parallel, a class-sharded classifier — and the built-in mlp and
 * mlp-wide (10,000 classes, logits never gathered), each trained on real agent processes equal to
 * tfjs's own `model.fit` on the same model, weights and data: within 1e-4 of each weight's scale,
 * and within 1e-4 of the update itself (max |a − b| / max |a − a₀|).
 */
const K = 3;
const LR = 0.05;
let root: string;
let transformerFile: string;
let transformerData: string;

beforeAll(async () => {
  await selectBackend();
  root = mkdtempSync(join(tmpdir(), 'shoal-tp-graph-'));
  transformerFile = await saveLayersModel(smallTransformer(), join(root, 'transformer'));
  transformerData = join(root, 'transformer', 'data');
  writeNpyData(transformerData, SMALL_TRANSFORMER_ARRAYS, 64);
}, 120_000);
afterAll(() => rmSync(root, { recursive: true, force: true }));

/** Train on real agents; the checkpoint's parameters by weight name, and the compiled program each shard logged. */
async function shoal(model: ModelGraph, plan: Plan, training: TrainingSetup | undefined, tag: string): Promise<{ params: Map<string, Float32Array>; programs: string[] }> {
  const runDir = join(root, tag);
  const programs: string[] = [];
  const failures: string[] = [];
  const job = new LocalJob({
    model, plan, training, agents: agentsNeeded(plan), steps: K, runDir, evalEverySteps: K, profile: false,
    onEvent: (e) => {
      if (e.type === 'log' && e.message.includes(' runs ')) programs.push(e.message);
      if (e.type === 'status' && e.state === 'failed') failures.push(e.message ?? '');
    },
  });
  await job.start();
  await job.exited();
  expect(failures).toEqual([]);
  return { params: readParams(join(runDir, 'checkpoints')), programs };
}

/** tfjs's own training: K steps of model.fit (SGD, softmax cross-entropy from logits) on the samples in order. */
async function tfjsFit(model: tfl.LayersModel, x: tf.Tensor, labels: tf.Tensor, batch: number): Promise<{ before: Map<string, Float32Array>; after: Map<string, Float32Array> }> {
  const values = () => new Map(model.weights.map((w) => [w.originalName, (w.read().dataSync() as Float32Array).slice()]));
  const before = values();
  const classes = (model.outputs[0].shape as number[])[1];
  model.compile({ optimizer: tf.train.sgd(LR), loss: (yTrue: tf.Tensor, yPred: tf.Tensor) => tf.losses.softmaxCrossEntropy(yTrue, yPred) });
  const y = tf.oneHot(tf.cast(tf.reshape(labels, [-1]), 'int32'), classes);
  await model.fit(x, y, { batchSize: batch, epochs: 1, shuffle: false, verbose: 0 });
  return { before, after: values() };
}

/** Equal within 1e-4 of each weight's scale and of its update (weights that did not move: unmoved). */
function expectSameTraining(got: Map<string, Float32Array>, reference: { before: Map<string, Float32Array>; after: Map<string, Float32Array> }): void {
  expect([...got.keys()].sort()).toEqual([...reference.after.keys()].sort());
  let moved = 0;
  for (const [name, expected] of reference.after) {
    const ours = got.get(name)!;
    const initial = reference.before.get(name)!;
    expect(maxRelativeError(ours, expected), name).toBeLessThan(1e-4);
    let diff = 0;
    let update = 0;
    for (let i = 0; i < expected.length; i++) {
      diff = Math.max(diff, Math.abs(ours[i] - expected[i]));
      update = Math.max(update, Math.abs(expected[i] - initial[i]));
    }
    if (update === 0) expect(diff, `${name} (unmoved)`).toBe(0);
    else {
      moved++;
      expect(diff / update, `${name}: error relative to the update`).toBeLessThan(1e-4);
    }
  }
  expect(moved).toBeGreaterThan(0);
}

function npyTensor(file: string, n: number): tf.Tensor {
  const a = openNpy(file);
  const out = new Float32Array(n * a.rowSize);
  a.readRange(0, n, out);
  a.close();
  return tf.tensor(out, [n, ...a.shape.slice(1)]);
}

describe('a small transformer, split by Megatron’s layout, trains as tfjs does', () => {
  let reference: { before: Map<string, Float32Array>; after: Map<string, Float32Array> };
  beforeAll(async () => {
    const x = npyTensor(join(transformerData, 'x.npy'), K * 16);
    const y = npyTensor(join(transformerData, 'y.npy'), K * 16);
    reference = await tfjsFit(await loadLayersModel(transformerFile), x, y, 16);
  }, 120_000);

  it.each([
    { preset: 'pp1-dp1-tp2', extra: {} },
    { preset: 'pp1-dp1-tp4', extra: {} },
    { preset: 'pp2-dp1-tp2', extra: { schedule: '1f1b' } },
    { preset: 'pp1-dp2-tp2', extra: { zero: 2 } },
  ] as Array<{ preset: string; extra: Partial<Plan> }>)('$preset $extra', async ({ preset, extra }) => {
    const model = loadModel(transformerFile);
    const base = presetPlan(model, preset, { globalBatch: 16, microBatches: 2, seed: 7, optimizer: { kind: 'sgd', learningRate: LR, momentum: 0 } });
    const plan = parsePlan({ ...base, ...extra, model: model.source!.modelFile, shuffle: false });
    // Every pattern was found in the graph, by kind and wiring, not by name.
    expect(plan.sharding).toMatchObject({
      embed: { weight: 'S(0)' },
      attention_1: { weight: 'S(1)' },
      attention_2: { weight: 'S(1)' },
      mlp_1_up: { weight: 'S(1)' },
      mlp_1_down: { weight: 'S(0)' },
      mlp_2_up: { weight: 'S(1)' },
      mlp_2_down: { weight: 'S(0)' },
      classifier: { weight: 'S(1)' },
    });
    const training = trainingSetupFrom({ data: transformerData }, model, plan.seed);
    const { params, programs } = await shoal(model, plan, training, `transformer-${preset}-${Object.values(extra).join('')}`);
    expect(programs.join('\n')).toMatch(/attention_1 \(heads\)/);
    expectSameTraining(params, reference);
  }, 300_000);
});

describe('the built-in models on the graph executor, tensor-parallel, train as tfjs does', () => {
  it.each(['mlp', 'mlp-wide'])('%s: pp1-dp1-tp2, the classifier class-sharded, its logits never gathered', async (name) => {
    const model = zooModel(name);
    const plan: Plan = { ...presetPlan(model, 'pp1-dp1-tp2', { globalBatch: 32, microBatches: 2, optimizer: { kind: 'sgd', learningRate: LR, momentum: 0 } }), shuffle: false };
    expect(plan.sharding.logits).toEqual({ weight: 'S(1)' });
    const { params, programs } = await shoal(model, plan, undefined, `${name}-tp2`);
    expect(programs).toHaveLength(2);
    for (const program of programs) {
      expect(program).toMatch(/logits \(column-parallel\)$/);
      expect(program).not.toMatch(/gather features of logits/);
    }

    const reference = await buildLayersModel(kerasTopology(model, 'test').topology, plan.seed);
    const { train } = loadMnist();
    const n = K * plan.globalBatch;
    const x = tf.tensor(train.images.subarray(0, n * 784), [n, ...(reference.inputs[0].shape.slice(1) as number[])]);
    const y = tf.tensor(Float32Array.from(train.labels.subarray(0, n)), [n]);
    expectSameTraining(params, await tfjsFit(reference, x, y, plan.globalBatch));
  }, 300_000);
});
