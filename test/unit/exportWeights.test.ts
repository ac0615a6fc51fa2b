import '@tensorflow/tfjs-backend-cpu';
import * as tf from '@tensorflow/tfjs-core';
import * as tfl from '@tensorflow/tfjs-layers';
import { mkdirSync, mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { writeCheckpoint, type CheckpointTensor } from '../../engine/wire/checkpointFile.js';
import { gatherBatch, loadMnist } from '../../agents/data/mnist.js';
import { buildGraphStage } from '../../agents/exec/graph/buildGraphStage.js';
import type { GraphStage } from '../../agents/exec/graph/graphStage.js';
import { defaultTraining } from '../../engine/protocol/trainingSetup.js';
import { kerasTopology } from '../../engine/model/export/kerasTopology.js';
import { zooModel } from '../../engine/model/zoo.js';
import { exportWeights } from '../../engine/node/export/exportWeights.js';
import { createRunDir } from '../../engine/node/jobs/runStore.js';
import { presetPlan } from '../../engine/plan/presets.js';

const work = mkdtempSync(join(tmpdir(), 'shoal-export-'));
afterAll(() => rmSync(work, { recursive: true, force: true }));
beforeAll(async () => {
  await tf.setBackend('cpu');
});

/** tfjs-layers' loader reading a model.json folder from disk (what tfjs-node's file:// handler does). */
function folderHandler(dir: string): tf.io.IOHandler {
  return {
    async load() {
      const json = JSON.parse(readFileSync(join(dir, 'model.json'), 'utf8')) as tf.io.ModelJSON;
      const specs = json.weightsManifest.flatMap((g) => g.weights);
      const buffers = json.weightsManifest.flatMap((g) => g.paths.map((p) => readFileSync(join(dir, p))));
      const all = Buffer.concat(buffers);
      return {
        modelTopology: json.modelTopology,
        format: json.format,
        generatedBy: json.generatedBy,
        weightSpecs: specs,
        weightData: all.buffer.slice(all.byteOffset, all.byteOffset + all.byteLength),
      };
    },
  };
}

/**
 * A run folder whose checkpoint holds a stage's parameters, perturbed so that biases are not
 * zero, plus an optimizer slot (which the export leaves out). Returns the module with those values.
 */
async function runWithCheckpoint(modelName: string, seed: number): Promise<{ runDir: string; module: GraphStage }> {
  const model = zooModel(modelName);
  const module = await buildGraphStage(model, presetPlan(model, 'pp1-dp1', { seed }), 0, defaultTraining(model).losses);
  const tensors: CheckpointTensor[] = [];
  const parts: Float32Array[] = [];
  let offset = 0;
  module.params.forEach((p, i) => {
    const spec = module.paramSpecs[i];
    const values = Float32Array.from(p.dataSync(), (v, j) => v + 0.01 * Math.sin(j + i * 7 + seed));
    p.assign(tf.tensor(values, spec.shape));
    for (const slot of [undefined, 'velocity']) {
      tensors.push({ name: spec.name, slot, shape: spec.shape, offset, length: values.length });
      parts.push(slot ? values.map((v) => -v) : values);
      offset += values.length;
    }
  });
  const body = new Float32Array(offset);
  let at = 0;
  for (const part of parts) {
    body.set(part, at);
    at += part.length;
  }
  const jobId = `job-export-${modelName}`;
  const runDir = createRunDir({ jobId, createdAt: new Date(0).toISOString(), model: modelName, plan: presetPlan(model, 'pp1-dp1'), agents: 1, steps: 7 }, join(work, jobId));
  // Two checkpoints: the newest must be the one exported.
  writeCheckpoint(join(runDir, 'checkpoints', 'step-0000003.ckpt'), { format: 'shoal-checkpoint', version: 1, jobId, createdAt: '', model: modelName, plan: {}, step: 3, optimizer: { kind: 'sgd', step: 3 }, tensors: tensors.map((t) => ({ ...t })) }, new Float32Array(body.length));
  writeCheckpoint(join(runDir, 'checkpoints', 'step-0000007.ckpt'), { format: 'shoal-checkpoint', version: 1, jobId, createdAt: '', model: modelName, plan: {}, step: 7, optimizer: { kind: 'sgd', step: 7 }, tensors }, body);
  return { runDir, module };
}

describe('weights export in tfjs format', () => {
  for (const [modelName, seed] of [['mlp', 1], ['cnn', 2], ['mlp-wide', 3]] as const) {
    it(`${modelName}: tf.loadLayersModel predicts the agents' logits on test digits`, async () => {
      const { runDir, module } = await runWithCheckpoint(modelName, seed);
      const out = join(work, `${modelName}-tfjs`);
      const result = exportWeights(runDir, out);
      expect(result).toMatchObject({ dir: out, model: modelName, step: 7, files: ['model.json', 'group1-shard1of1.bin'] });
      const loaded = await tfl.loadLayersModel(folderHandler(out));
      expect(loaded.layers.map((l) => l.name)).toEqual(zooModel(modelName).layers.slice(1).map((l) => l.id));
      expect(loaded.countParams()).toBe(module.params.reduce((n, p) => n + p.size, 0));

      const digits = gatherBatch(loadMnist().test, Array.from({ length: 32 }, (_, i) => i * 61));
      const x = tf.tensor2d(digits.images, [32, 784]);
      const theirs = (loaded.predict(x) as tf.Tensor).dataSync();
      const ours = (await module.infer(x)).dataSync();
      expect(theirs.length).toBe(ours.length);
      let worst = 0;
      for (let i = 0; i < ours.length; i++) worst = Math.max(worst, Math.abs(theirs[i] - ours[i]));
      expect(worst).toBeLessThan(1e-5);
      x.dispose();
      loaded.dispose();
      module.dispose();
    });
  }

  it('refuses models that are not a chain of executable layers, naming the layer', () => {
    expect(() => kerasTopology(zooModel('resnet18'), 'test')).toThrow(/cannot be exported|not a chain/);
  });

  it('says what it looked for when the run does not exist', () => {
    mkdirSync(join(work, 'empty', 'checkpoints'), { recursive: true });
    expect(() => exportWeights(join(work, 'empty'))).toThrow(/has no checkpoint yet/);
    expect(() => exportWeights(join(work, 'missing'))).toThrow(/No run or checkpoint "missing"/);
  });
});
