import { copyFileSync, mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { selectBackend } from '../../agents/backend/selectBackend.js';
import { runExportCommand } from '../../engine/node/commands/export.js';
import { exportWeights } from '../../engine/node/export/exportWeights.js';
import { LocalJob } from '../../engine/node/jobs/localJob.js';
import { openModel } from '../../engine/node/modelRef.js';
import { trainingSetupFrom } from '../../engine/node/trainingOptions.js';
import { executionSupport } from '../../engine/plan/executionSupport.js';
import { parsePlan } from '../../engine/plan/plan.js';
import { presetPlan } from '../../engine/plan/presets.js';
import { registeredClasses } from '../../engine/wire/tfjsLayers.js';
import { registerUserLayers } from '../../engine/wire/userLayers.js';
import { openNpy } from '../../engine/wire/data/npy.js';
import { loadLayersModel, saveLayersModel, tf, tfl, writeNpyData } from '../support/userModels.js';
import { maxRelativeError, maxUpdateError } from './paramsFile.js';

/**
 * `--layers FILE`: a user's own layer class, defined and registered by a module's register(tf) —
 * an ES module here (README.md's example, a weight per feature) and a CommonJS one — imports with its
 * weights, trains on an agent (which runs the same module) exactly as model.fit trains it, and the
 * export loads with tf.loadLayersModel once the class is registered.
 */
const ESM = `export function register(tf) {
  class Scale extends tf.layers.Layer {
    static className = 'Scale';
    build(inputShape) { this.w = this.addWeight('w', [inputShape[inputShape.length - 1]], 'float32', tf.initializers.ones()); }
    call(inputs) { return tf.tidy(() => tf.mul(Array.isArray(inputs) ? inputs[0] : inputs, this.w.read())); }
  }
  tf.serialization.registerClass(Scale);
}
`;
const CJS = `module.exports.register = (tf) => {
  class Cube extends tf.layers.Layer {
    static className = 'Cube';
    call(inputs) { return tf.tidy(() => tf.pow(Array.isArray(inputs) ? inputs[0] : inputs, 3)); }
  }
  tf.serialization.registerClass(Cube);
};
`;
let root: string;
let esm: string;
let cjs: string;

beforeAll(async () => {
  await selectBackend();
  root = mkdtempSync(join(tmpdir(), 'shoal-user-layers-'));
  esm = join(root, 'layers.mjs');
  cjs = join(root, 'cube.cjs');
  writeFileSync(esm, ESM);
  writeFileSync(cjs, CJS);
});
afterAll(() => rmSync(root, { recursive: true, force: true }));

describe('--layers FILE', () => {
  it('runs register(tf) of an ES and a CommonJS module, returning the classes each registered', async () => {
    expect(await registerUserLayers(esm)).toEqual(['Scale']);
    expect(await registerUserLayers(cjs)).toEqual(['Cube']);
    await expect(registerUserLayers(join(root, 'missing.js'))).rejects.toThrow(/--layers .*missing\.js does not exist\. Pass a JavaScript file/);
    const empty = join(root, 'empty.mjs');
    writeFileSync(empty, 'export const x = 1;\n');
    await expect(registerUserLayers(empty)).rejects.toThrow(/exports no register function \(it exports x\)/);
  });

  it('a custom layer trains on one agent as model.fit trains it, and its export loads in tfjs', async () => {
    await registerUserLayers(esm);
    const Scale = registeredClasses().Scale[0] as new (args: object) => tfl.layers.Layer;
    const x = tfl.input({ shape: [4], name: 'x' });
    const hidden = tfl.layers.dense({ units: 3, activation: 'tanh', name: 'hidden' }).apply(x) as tfl.SymbolicTensor;
    const scaled = new Scale({ name: 'scale' }).apply(hidden) as tfl.SymbolicTensor;
    const out = tfl.layers.dense({ units: 1, name: 'out' }).apply(scaled) as tfl.SymbolicTensor;
    const modelFile = await saveLayersModel(tfl.model({ inputs: x, outputs: out, name: 'custom' }), join(root, 'model'));
    const data = join(root, 'model', 'data');
    writeNpyData(data, { x: { shape: [4], kind: 'float' }, y: { shape: [1], kind: 'float' } }, 24);

    const model = await openModel(modelFile, esm);
    const node = model.layers.find((l) => l.id === 'scale')!;
    expect(node.spec).toMatchObject({ kind: 'tfjsLayer', className: 'Scale', outputShape: [3] });
    expect(node.params).toBe(3);
    expect(model.source).toEqual({ modelFile, layersFile: esm });
    const plan = parsePlan({ ...presetPlan(model, 'pp1-dp1', { globalBatch: 8, microBatches: 1, seed: 5, optimizer: { kind: 'sgd', learningRate: 0.1, momentum: 0 } }), model: modelFile, shuffle: false });
    expect(executionSupport(plan, model).filter((d) => d.severity === 'error')).toEqual([]);
    const runDir = join(root, 'run');
    const job = new LocalJob({ model, plan, training: trainingSetupFrom({ data, loss: 'mse' }, model, plan.seed), agents: 1, steps: 3, runDir, profile: false, onEvent: () => {} });
    await job.start();
    await job.exited();
    const exported = join(exportWeights(runDir, join(runDir, 'export')).dir, 'model.json');
    expect(readFileSync(exported, 'utf8')).toContain('"class_name":"Scale"');
    const shoal = await loadLayersModel(exported);

    const reference = await loadLayersModel(modelFile);
    const initial = new Map(reference.weights.map((w) => [w.originalName, (w.read().dataSync() as Float32Array).slice()]));
    reference.compile({ optimizer: tf.train.sgd(0.1), loss: 'meanSquaredError' });
    const read = (file: string) => {
      const a = openNpy(join(data, file));
      const values = new Float32Array(24 * a.rowSize);
      a.readRange(0, 24, values);
      a.close();
      return tf.tensor(values, [24, ...a.shape.slice(1)]);
    };
    await reference.fit(read('x.npy'), read('y.npy'), { batchSize: 8, epochs: 1, shuffle: false, verbose: 0 });
    for (const w of reference.weights) {
      const theirs = w.read().dataSync() as Float32Array;
      const ours = shoal.weights.find((v) => v.originalName === w.originalName)!.read().dataSync() as Float32Array;
      expect(maxRelativeError(ours, theirs), w.originalName).toBeLessThan(1e-4);
      expect(maxRelativeError(theirs, initial.get(w.originalName)!), `${w.originalName} moved`).toBeGreaterThan(1e-4);
      expect(maxUpdateError(ours, theirs, initial.get(w.originalName)!), w.originalName).toBeLessThan(0.01);
    }

    // shoal export --layers puts the module beside the model.json that names its class.
    let printed = '';
    const io = { out: (t: string) => (printed += t), err: (t: string) => (printed += t), interactive: false };
    expect(await runExportCommand([runDir, '--out', join(root, 'with-layers'), '--layers', esm, '--json'], io)).toBe(0);
    expect(JSON.parse(printed).files).toEqual(['model.json', 'group1-shard1of1.bin', 'layers.mjs']);
    expect(readFileSync(join(root, 'with-layers', 'layers.mjs'), 'utf8')).toBe(ESM);
  }, 240_000);

  it('without --layers the class is refused, naming it and --layers', async () => {
    const modelFile = join(root, 'model', 'model.json');
    const doc = JSON.parse(readFileSync(modelFile, 'utf8'));
    const renamed = join(root, 'unknown');
    const text = JSON.stringify(doc).replaceAll('"Scale"', '"NotRegistered"');
    mkdirSync(renamed);
    writeFileSync(join(renamed, 'model.json'), text);
    copyFileSync(join(root, 'model', 'weights.bin'), join(renamed, 'weights.bin'));
    const model = await openModel(join(renamed, 'model.json'));
    const errors = executionSupport(parsePlan({ ...presetPlan(model, 'pp1-dp1'), model: join(renamed, 'model.json') }), model).filter((d) => d.severity === 'error');
    expect(errors.map((d) => d.code)).toEqual(['layer-not-executable']);
    expect(`${errors[0].message} ${errors[0].hint}`).toMatch(/NotRegistered.*--layers FILE/);
  });
});
