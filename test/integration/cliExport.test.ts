import '@tensorflow/tfjs-backend-cpu';
import * as tf from '@tensorflow/tfjs-core';
import * as tfl from '@tensorflow/tfjs-layers';
import { spawnSync } from 'node:child_process';
import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { gatherBatch, loadMnist } from '../../agents/data/mnist.js';
import { buildGraphStage } from '../../agents/exec/graph/buildGraphStage.js';
import { presetPlan } from '../../engine/plan/presets.js';
import { defaultTraining } from '../../engine/protocol/trainingSetup.js';
import { zooModel } from '../../engine/model/zoo.js';
import { readParams } from './paramsFile.js';

const root = join(__dirname, '..', '..');
const work = mkdtempSync(join(tmpdir(), 'shoal-cli-export-'));
afterAll(() => rmSync(work, { recursive: true, force: true }));

const shoal = (args: string[]) => spawnSync(process.execPath, [join(root, 'bin', 'shoal.cjs'), ...args], { cwd: root, encoding: 'utf8', timeout: 180_000 });

describe('shoal export', () => {
  it('exports a trained run that tf.loadLayersModel loads and that predicts what the agents compute', async () => {
    const run = join(work, 'run');
    const trained = shoal(['train', '--model', 'mlp', '--cluster', 'local:2', '--plan', 'pp2-dp1', '--steps', '8', '--out', run, '--json']);
    expect(trained.status, trained.stderr).toBe(0);
    const out = join(work, 'tfjs');
    const exported = shoal(['export', run, '--out', out, '--json']);
    expect(exported.status, exported.stderr).toBe(0);
    expect(JSON.parse(exported.stdout)).toMatchObject({ dir: out, model: 'mlp', step: 8 });

    await tf.setBackend('cpu');
    const json = JSON.parse(readFileSync(join(out, 'model.json'), 'utf8')) as tf.io.ModelJSON;
    const weights = readFileSync(join(out, json.weightsManifest[0].paths[0]));
    const loaded = await tfl.loadLayersModel(
      tf.io.fromMemory({ modelTopology: json.modelTopology, weightSpecs: json.weightsManifest[0].weights, weightData: weights.buffer.slice(weights.byteOffset, weights.byteOffset + weights.byteLength) }),
    );

    // The agents' own forward pass, with the checkpoint's parameters restored by name.
    const model = zooModel('mlp');
    const module = await buildGraphStage(model, presetPlan(model, 'pp1-dp1'), 0, defaultTraining(model).losses);
    const params = readParams(join(run, 'checkpoints'));
    module.params.forEach((p, i) => p.assign(tf.tensor(params.get(module.paramSpecs[i].name)!, module.paramSpecs[i].shape)));

    const digits = gatherBatch(loadMnist().test, Array.from({ length: 64 }, (_, i) => i * 31));
    const x = tf.tensor2d(digits.images, [64, 784]);
    const theirs = (loaded.predict(x) as tf.Tensor).dataSync();
    const ours = (await module.infer(x)).dataSync();
    let worst = 0;
    for (let i = 0; i < ours.length; i++) worst = Math.max(worst, Math.abs(theirs[i] - ours[i]));
    expect(worst).toBeLessThan(1e-5);
  });

  it('says what it looked for when the run does not exist', () => {
    const missing = shoal(['export', join(work, 'nope')]);
    expect(missing.status).toBe(1);
    expect(missing.stderr).toMatch(/No run or checkpoint "nope": looked at/);
  });
});
