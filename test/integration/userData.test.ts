import { mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import jpeg from 'jpeg-js';
import { PNG } from 'pngjs';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { selectBackend } from '../../agents/backend/selectBackend.js';
import { LocalJob } from '../../engine/node/jobs/localJob.js';
import { loadModel } from '../../engine/node/modelRef.js';
import { trainingSetupFrom, type OptionValues } from '../../engine/node/trainingOptions.js';
import { parsePlan, type Plan } from '../../engine/plan/plan.js';
import { presetPlan } from '../../engine/plan/presets.js';
import { writeNpy } from '../../engine/wire/data/npy.js';
import { readLayersModel } from '../../engine/wire/layersModelFile.js';
import { saveLayersModel, tfl } from '../support/userModels.js';
import { maxRelativeError, readParams } from './paramsFile.js';

/**
 * The user's data in the formats users keep it, through real agent processes: a spreadsheet-style CSV
 * and a folder of PNG and JPEG images sorted by class each train a saved tfjs model for a few steps on
 * 2 agents (two pipeline stages), and give exactly the parameters of the same job trained on the same
 * values written as a NumPy folder — so the readers feed the agents the right rows, labels and pixels;
 * the class names are written into the run (job.json) so predictions can be named.
 */
const STEPS = 4;
const SAMPLES = 48;
let root: string;
let mlpModel: string, cnnModel: string;
const CLASSES = ['cat', 'dog', 'eel'];

let state = 12345;
const rand = () => ((state = (Math.imul(state, 1664525) + 1013904223) >>> 0) / 4294967296);

beforeAll(async () => {
  await selectBackend();
  root = mkdtempSync(join(tmpdir(), 'shoal-user-data-'));

  const mlpIn = tfl.input({ shape: [4], name: 'features' });
  const hidden = tfl.layers.dense({ units: 8, activation: 'relu', name: 'hidden' }).apply(mlpIn) as tfl.SymbolicTensor;
  const mlpOut = tfl.layers.dense({ units: 3, activation: 'softmax', name: 'species' }).apply(hidden) as tfl.SymbolicTensor;
  mlpModel = await saveLayersModel(tfl.model({ inputs: mlpIn, outputs: mlpOut, name: 'table_mlp' }), join(root, 'mlp'));

  const cnnIn = tfl.input({ shape: [6, 6, 3], name: 'image' });
  const conv = tfl.layers.conv2d({ filters: 2, kernelSize: 3, activation: 'relu', name: 'conv' }).apply(cnnIn) as tfl.SymbolicTensor;
  const flat = tfl.layers.flatten({ name: 'flat' }).apply(conv) as tfl.SymbolicTensor;
  const cnnOut = tfl.layers.dense({ units: 3, activation: 'softmax', name: 'label' }).apply(flat) as tfl.SymbolicTensor;
  cnnModel = await saveLayersModel(tfl.model({ inputs: cnnIn, outputs: cnnOut, name: 'image_cnn' }), join(root, 'cnn'));

  // A table as a spreadsheet exports it: CRLF, a quoted text column with commas and quotes, class names.
  const lines = ['sample id,width,"note",height,depth,weight,animal'];
  const x = new Float32Array(SAMPLES * 4), y = new Int32Array(SAMPLES);
  for (let i = 0; i < SAMPLES; i++) {
    const v = [0, 1, 2, 3].map(() => Math.round((rand() * 4 - 2) * 1000) / 1000);
    y[i] = Math.floor(rand() * 3);
    x.set(v, i * 4);
    lines.push(`${i},${v[0]},"row ${i}, said ""hi""",${v[1]},${v[2]},${v[3]},${CLASSES[y[i]]}`);
  }
  writeFileSync(join(root, 'animals.csv'), lines.join('\r\n') + '\r\n');
  // The same table's chosen features and labels as NumPy arrays.
  mkdirSync(join(root, 'table-npy'));
  writeNpy(join(root, 'table-npy', 'x.npy'), x, [SAMPLES, 4]);
  writeNpy(join(root, 'table-npy', 'y.npy'), y, [SAMPLES]);

  // Images in class folders, PNG and JPEG, at the model's size; their pixels / 255 as NumPy arrays, in
  // the folder's order (classes by name, files by name).
  const px = new Float32Array(SAMPLES * 108), labels = new Int32Array(SAMPLES);
  const perClass = SAMPLES / 3;
  CLASSES.forEach((c, k) => {
    mkdirSync(join(root, 'images', c), { recursive: true });
    for (let j = 0; j < perClass; j++) {
      const i = k * perClass + j;
      const rgba = Buffer.alloc(6 * 6 * 4);
      for (let p = 0; p < 36; p++) rgba.set([Math.floor(rand() * 256), Math.floor(rand() * 256) * (k === 0 ? 1 : 0.5), Math.floor(rand() * 256), 255].map(Math.floor), p * 4);
      const name = `img${String(j).padStart(2, '0')}`;
      let decoded: Uint8Array;
      if (j % 2 === 0) {
        const png = new PNG({ width: 6, height: 6 });
        rgba.copy(png.data);
        writeFileSync(join(root, 'images', c, `${name}.png`), PNG.sync.write(png));
        decoded = rgba;
      } else {
        writeFileSync(join(root, 'images', c, `${name}.jpg`), jpeg.encode({ data: rgba, width: 6, height: 6 }, 90).data);
        decoded = jpeg.decode(readFileSync(join(root, 'images', c, `${name}.jpg`)), { useTArray: true, formatAsRGBA: true }).data;
      }
      for (let p = 0; p < 36; p++) for (let ch = 0; ch < 3; ch++) px[i * 108 + p * 3 + ch] = decoded[p * 4 + ch] * (1 / 255);
      labels[i] = k;
    }
  });
  mkdirSync(join(root, 'images-npy'));
  writeNpy(join(root, 'images-npy', 'x.npy'), px, [SAMPLES, 6, 6, 3]);
  writeNpy(join(root, 'images-npy', 'y.npy'), labels, [SAMPLES]);
}, 120_000);
afterAll(() => rmSync(root, { recursive: true, force: true }));

async function train(modelFile: string, data: OptionValues, tag: string): Promise<{ runDir: string; notes: string[] }> {
  const model = loadModel(modelFile);
  const base = presetPlan(model, 'pp2-dp1', { globalBatch: 8, microBatches: 2, seed: 7, optimizer: { kind: 'sgd', learningRate: 0.1, momentum: 0.9 } });
  const plan: Plan = parsePlan({ ...base, model: modelFile });
  const training = trainingSetupFrom({ ...data, 'validation-split': '0.25' }, model, plan.seed);
  const runDir = join(root, `run-${tag}`);
  const job = new LocalJob({ model, plan, training, agents: 2, steps: STEPS, runDir, profile: false, onEvent: () => {} });
  await job.start();
  await job.exited();
  return { runDir, notes: training.notes };
}

function expectSameParams(modelFile: string, got: Map<string, Float32Array>, want: Map<string, Float32Array>): void {
  expect([...got.keys()].sort()).toEqual([...want.keys()].sort());
  for (const [name, values] of want) expect(maxRelativeError(got.get(name)!, values), name).toBeLessThan(1e-5);
  const initial = readLayersModel(modelFile).weights!;
  expect([...want].filter(([w, v]) => maxRelativeError(v, initial.get(w)!.values) > 1e-3).length).toBeGreaterThan(0);
}

describe("the user's data through real agents", () => {
  it('a spreadsheet CSV (--label-column, --feature-columns) trains as its values in a NumPy folder', async () => {
    const csv = await train(mlpModel, { data: join(root, 'animals.csv'), 'label-column': 'animal', 'feature-columns': 'width,height,depth,weight' }, 'csv');
    expect(JSON.parse(readFileSync(join(csv.runDir, 'job.json'), 'utf8')).training.classes).toEqual({ species: CLASSES });
    expect(csv.notes.join('\n')).toMatch(/CSV table .*animals\.csv \(train 36, validation the last 12; features ← 4 columns; species ← 'animal' \(3 classes "cat", "dog", "eel"\)\)/);
    const npy = await train(mlpModel, { data: join(root, 'table-npy') }, 'table-npy');
    expectSameParams(mlpModel, readParams(join(csv.runDir, 'checkpoints')), readParams(join(npy.runDir, 'checkpoints')));
  }, 240_000);

  it('a folder of PNG and JPEG images by class trains as its pixels in a NumPy folder', async () => {
    const images = await train(cnnModel, { data: join(root, 'images') }, 'images');
    expect(JSON.parse(readFileSync(join(images.runDir, 'job.json'), 'utf8')).training.classes).toEqual({ label: CLASSES });
    expect(images.notes.join('\n')).toMatch(/image folder .*images \(train 36, validation 12 .*3 classes: cat 16, dog 16, eel 16; 6×6×3, pixels 0–1\)/);
    // A class folder's split is seeded random by default; its NumPy copy asks for the same hold-out.
    const npy = await train(cnnModel, { data: join(root, 'images-npy'), 'validation-holdout': 'seeded-random' }, 'images-npy');
    expectSameParams(cnnModel, readParams(join(images.runDir, 'checkpoints')), readParams(join(npy.runDir, 'checkpoints')));
  }, 240_000);
});
