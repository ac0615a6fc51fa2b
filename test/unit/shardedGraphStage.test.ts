import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import { PeerMesh } from '../../agents/comm/peerMesh.js';
import { ProcessGroup } from '../../agents/comm/processGroup.js';
import { buildShardedGraphStage } from '../../agents/exec/tensorParallel/buildShardedGraphStage.js';
import { placeSlice } from '../../agents/exec/tensorParallel/shardedParams.js';
import { TensorGroup } from '../../agents/exec/tensorParallel/tensorGroup.js';
import { loadModel } from '../../engine/node/modelRef.js';
import { trainingSetupFrom } from '../../engine/node/trainingOptions.js';
import { parsePlan } from '../../engine/plan/plan.js';
import { presetPlan } from '../../engine/plan/presets.js';
import { loadLayersModel, saveLayersModel, tf, writeNpyData } from '../support/userModels.js';
import { smallTransformer, SMALL_TRANSFORMER_ARRAYS } from '../support/smallTransformer.js';

/**
 * The tensor-parallel program of a graph stage on a group of one: every split layer's local code
 * (column- and row-parallel Dense, heads, vocabulary, class-sharded cross-entropy) computes the
 * gradients tfjs computes for the whole model; the collectives between shards are the integration
 * tests' (tensorParallelGraph).
 */
let root: string;
let file: string;
beforeAll(async () => {
  root = mkdtempSync(join(tmpdir(), 'shoal-sharded-graph-'));
  file = await saveLayersModel(smallTransformer(), join(root, 'model'));
  writeNpyData(join(root, 'model', 'data'), SMALL_TRANSFORMER_ARRAYS, 8);
});
afterAll(() => rmSync(root, { recursive: true, force: true }));

describe('ShardedGraphStage on a group of one', () => {
  it('gives tfjs’s gradients of the mean cross-entropy for every weight of a small transformer', async () => {
    const graph = loadModel(file);
    const base = presetPlan(graph, 'pp1-dp1-tp2', { seed: 3 });
    const plan = parsePlan({ ...base, model: file, stages: base.stages.map((s) => ({ ...s, tensorParallel: 1 })) });
    const training = trainingSetupFrom({ data: join(root, 'model', 'data') }, graph, plan.seed);
    const group = new TensorGroup(new ProcessGroup(0, [0], new Map()));
    const stage = await buildShardedGraphStage(graph, plan, 0, training.losses, group);
    const rows = 8;
    const ids = tf.tensor2d(Float32Array.from({ length: rows * 6 }, (_, i) => (i * 7) % 16), [rows, 6]);
    const labels = Float32Array.from({ length: rows }, (_, i) => i % 4);
    const { loss } = await stage.lossBackward(ids, labels, rows, rows);
    const ours = stage.takeGradients();

    const reference = await loadLayersModel(file);
    const weights = reference.trainableWeights.map((w) => w.read() as tf.Variable);
    const f = () => tf.losses.softmaxCrossEntropy(tf.oneHot(tf.tensor1d(labels, 'int32'), 4), reference.apply(ids, { training: true }) as tf.Tensor) as tf.Scalar;
    const { value, grads } = tf.variableGrads(f, weights);
    expect(loss).toBeCloseTo(value.dataSync()[0], 5);
    stage.paramSpecs.forEach((spec, k) => {
      const w = reference.trainableWeights.find((v) => v.originalName === spec.name)!;
      const theirs = grads[(w.read() as tf.Variable).name].dataSync();
      const mine = ours[k].dataSync();
      const scale = Math.max(...theirs.map(Math.abs), 1e-6);
      const err = Math.max(...mine.map((v, i) => Math.abs(v - theirs[i])));
      expect(err / scale, spec.name).toBeLessThan(1e-4);
    });
  });
});

const meshes: PeerMesh[] = [];
afterEach(() => meshes.splice(0).forEach((m) => m.close()));

/** Two tensor-parallel shards in this process, each with its own sockets. */
async function twoShards(): Promise<TensorGroup[]> {
  const mesh = [0, 1].map(() => new PeerMesh('sharded-graph', () => {}));
  meshes.push(...mesh);
  const ports = await Promise.all(mesh.map((m) => m.listen('127.0.0.1')));
  const peers = ports.map((port, rank) => ({ rank, host: '127.0.0.1', port }));
  await Promise.all(mesh.map((m, rank) => m.connect(rank, peers.filter((p) => p.rank !== rank))));
  return mesh.map((m, rank) => new TensorGroup(new ProcessGroup(rank, [0, 1], m.links)));
}

describe('ShardedGraphStage on two shards', () => {
  it('the shards’ gradients, summed and placed, are tfjs’s for every weight', async () => {
    const graph = loadModel(file);
    const plan = parsePlan({ ...presetPlan(graph, 'pp1-dp1-tp2', { seed: 3 }), model: file });
    const training = trainingSetupFrom({ data: join(root, 'model', 'data') }, graph, plan.seed);
    const groups = await twoShards();
    const stages = await Promise.all(groups.map((g) => buildShardedGraphStage(graph, plan, 0, training.losses, g)));
    const rows = 8;
    const ids = tf.tensor2d(Float32Array.from({ length: rows * 6 }, (_, i) => (i * 7) % 16), [rows, 6]);
    const labels = Float32Array.from({ length: rows }, (_, i) => i % 4);
    const results = await Promise.all(stages.map((stage, shard) => stage.lossBackward(tf.slice(ids, shard * 4, 4), labels, rows, rows)));
    const grads = stages.map((s) => s.takeGradients().map((g) => g.dataSync() as Float32Array));

    const reference = await loadLayersModel(file);
    const weights = reference.trainableWeights.map((w) => w.read() as tf.Variable);
    const f = () => tf.losses.softmaxCrossEntropy(tf.oneHot(tf.tensor1d(labels, 'int32'), 4), reference.apply(ids, { training: true }) as tf.Tensor) as tf.Scalar;
    const { value, grads: expected } = tf.variableGrads(f, weights);
    expect(results[0].loss + results[1].loss).toBeCloseTo(value.dataSync()[0], 5);
    stages[0].paramSpecs.forEach((spec, k) => {
      const w = reference.trainableWeights.find((v) => v.originalName === spec.name)!;
      const theirs = expected[(w.read() as tf.Variable).name].dataSync() as Float32Array;
      let mine: Float32Array;
      if (spec.sum === 'batchSplit') mine = grads[0][k].map((v, i) => v + grads[1][k][i]);
      else if (spec.sum === 'replicated') mine = grads[0][k];
      else {
        mine = new Float32Array(theirs.length);
        const { axis, parts, fullShape } = spec.split!;
        grads.forEach((g, shard) => placeSlice(mine, g[k], fullShape, axis, parts, shard));
      }
      const scale = Math.max(...theirs.map(Math.abs), 1e-6);
      const err = Math.max(...mine.map((v, i) => Math.abs(v - theirs[i])));
      expect(err / scale, `${spec.name} (${spec.sum})`).toBeLessThan(1e-4);
    });
  });
});
