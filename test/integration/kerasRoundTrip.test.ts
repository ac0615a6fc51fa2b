import { execFileSync, spawnSync } from 'node:child_process';
import { existsSync, mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { exportWeights } from '../../engine/node/export/exportWeights.js';
import { kerasSourceOf } from '../../engine/node/export/exportKeras.js';
import { LocalJob } from '../../engine/node/jobs/localJob.js';
import { latestCheckpoint } from '../../engine/node/jobs/runStore.js';
import { h5Ready } from '../../engine/node/keras/h5.js';
import { loadModel } from '../../engine/node/modelRef.js';
import { trainingSetupFrom } from '../../engine/node/trainingOptions.js';
import { parsePlan } from '../../engine/plan/plan.js';
import { presetPlan } from '../../engine/plan/presets.js';
import { readCheckpoint } from '../../engine/wire/checkpointFile.js';
import { readLayersModel } from '../../engine/wire/layersModelFile.js';
import { writeNpyData } from '../support/userModels.js';
import { h5pyPython } from '../support/h5pyPython.js';

/**
 * Keras files written by h5py in Keras's layout (test/fixtures/keras/make_keras_files.py) go round:
 * import → train 3 steps on one agent → `shoal export` (by default the format the model came in) →
 * read back with h5py and with Shoal's importer: the same config, every dataset at the path the
 * original held it, with its shape, holding the trained checkpoint's values.
 */
const python = h5pyPython('kerasRoundTrip.test');

type Arrays = Parameters<typeof writeNpyData>[1];
const CASES: Array<{ file: string; arrays: Arrays }> = [
  { file: 'mlp.keras', arrays: { x: { shape: [6], kind: 'float' }, y: { shape: [], kind: { classes: 3 } } } },
  { file: 'mlp.h5', arrays: { x: { shape: [6], kind: 'float' }, y: { shape: [], kind: { classes: 3 } } } },
  { file: 'cnn.keras', arrays: { x: { shape: [6, 6, 1], kind: 'float' }, y: { shape: [], kind: { classes: 3 } } } },
  { file: 'two_outputs.keras', arrays: { x: { shape: [6], kind: 'float' }, class_out: { shape: [], kind: { classes: 3 } }, value_out: { shape: [1], kind: 'float' } } },
  { file: 'nested.keras', arrays: { x: { shape: [6], kind: 'float' }, y: { shape: [], kind: { classes: 3 } } } },
  { file: 'lstm.keras', arrays: { x: { shape: [7], kind: { classes: 20 } }, y: { shape: [], kind: { classes: 2 } } } },
  { file: 'transformer.keras', arrays: { x: { shape: [4, 8], kind: 'float' }, y: { shape: [], kind: { classes: 2 } } } },
];

let dir: string;

/** Every dataset of a Keras file as h5py reads it, and (a .keras) its config.json text. */
function h5py(file: string): { config: string; datasets: Record<string, { shape: number[]; values: number[] }> } {
  const script = `
import h5py, io, json, sys, zipfile
path = sys.argv[1]
if path.endswith('.keras'):
    z = zipfile.ZipFile(path); f = h5py.File(io.BytesIO(z.read('model.weights.h5'))); config = z.read('config.json').decode()
else:
    f = h5py.File(path); config = f.attrs['model_config']; config = config.decode() if hasattr(config, 'decode') else config
    assert [n.decode() if hasattr(n, 'decode') else n for n in f['model_weights'].attrs['layer_names']]
out = {}
f.visititems(lambda n, o: out.__setitem__(n, {'shape': list(o.shape), 'values': o[...].astype('float64').ravel().tolist()}) if isinstance(o, h5py.Dataset) else None)
print(json.dumps({'config': config, 'datasets': out}))`;
  return JSON.parse(execFileSync(python!, ['-c', script, file], { encoding: 'utf8', maxBuffer: 1 << 26 })) as ReturnType<typeof h5py>;
}

beforeAll(async () => {
  await h5Ready();
  dir = mkdtempSync(join(tmpdir(), 'shoal-keras-trip-'));
  execFileSync(python!, [join(__dirname, '../fixtures/keras/make_keras_files.py'), dir]);
}, 60_000);
afterAll(() => rmSync(dir, { recursive: true, force: true }));

describe('a Keras file trains and comes home as the same kind of file', () => {
  for (const { file, arrays } of CASES) {
    it(`${file}: import → train → export → h5py and Shoal read the trained weights at Keras's paths`, async () => {
      const original = join(dir, file);
      const model = loadModel(original);
      const source = kerasSourceOf(model.source!.modelFile)!;
      const data = join(dir, `${file}-data`);
      writeNpyData(data, arrays, 32);
      const plan = parsePlan({ ...presetPlan(model, 'pp1-dp1', { globalBatch: 8, microBatches: 1, seed: 3, optimizer: { kind: 'sgd', learningRate: 0.1, momentum: 0 } }), model: model.source!.modelFile });
      const runDir = join(dir, `${file}-run`);
      const job = new LocalJob({ model, plan, training: trainingSetupFrom({ data }, model, plan.seed), agents: 1, steps: 3, runDir, profile: false, onEvent: () => {} });
      await job.start();
      await job.exited();
      const { header, body } = readCheckpoint(latestCheckpoint(join(runDir, 'checkpoints'))!);
      const trained = new Map(header.tensors.filter((t) => !t.slot).map((t) => [t.name, Array.from(body.subarray(t.offset, t.offset + t.length))]));

      const result = exportWeights(runDir);
      expect(result.files).toEqual([file]);
      const exported = join(result.dir, file);
      const before = h5py(original);
      const after = h5py(exported);
      expect(after.config).toBe(before.config);
      const kept = Object.keys(before.datasets).filter((p) => !p.startsWith('optimizer'));
      expect(Object.keys(after.datasets).sort()).toEqual(kept.sort());
      let changed = 0;
      for (const w of source.weights) {
        const path = w.path.replace(/^\//, '');
        expect(after.datasets[path].shape, path).toEqual(before.datasets[path].shape);
        expect(after.datasets[path].values, path).toEqual(Array.from(Float32Array.from(trained.get(w.name)!)));
        if (after.datasets[path].values.some((v, i) => v !== before.datasets[path].values[i])) changed++;
      }
      // Training moved the weights: the export is the checkpoint, not the file it started from.
      expect(changed).toBeGreaterThan(0);

      const again = readLayersModel(loadModel(exported).source!.modelFile);
      expect(again.weightNames).toEqual(source.weights.map((w) => w.name));
      for (const [name, w] of again.weights!) expect(Array.from(w.values), name).toEqual(Array.from(Float32Array.from(trained.get(name)!)));
    }, 120_000);
  }

  it('the command line: shoal train --model m.keras, then shoal export writes m.keras; the optimizer note comes once', () => {
    const root = join(__dirname, '..', '..');
    const env = { ...process.env, SHOAL_DATA_DIR: join(dir, 'cli-data') };
    const shoal = (args: string[]) => spawnSync(process.execPath, [join(root, 'bin', 'shoal.cjs'), ...args], { cwd: dir, env, encoding: 'utf8', timeout: 180_000 });
    const data = join(dir, 'cli-mlp-data');
    writeNpyData(data, { x: { shape: [6], kind: 'float' }, y: { shape: [], kind: { classes: 3 } } }, 32);
    const run = join(dir, 'cli-run');
    const trained = shoal(['train', '--model', join(dir, 'mlp.keras'), '--data', data, '--cluster', 'local:1', '--plan', 'pp1-dp1', '--batch', '8', '--steps', '2', '--out', run, '--json']);
    expect(trained.status, trained.stderr).toBe(0);
    expect(trained.stderr.split('optimizer state saved in the file is not carried over').length - 1).toBe(1);
    const exported = shoal(['export', run, '--json']);
    expect(exported.status, exported.stderr).toBe(0);
    expect(JSON.parse(exported.stdout)).toMatchObject({ dir: run, files: ['mlp.keras'], step: 2 });
    expect(Object.keys(h5py(join(run, 'mlp.keras')).datasets).sort()).toEqual(['layers/dense/vars/0', 'layers/dense/vars/1', 'layers/dense_1/vars/0', 'layers/dense_1/vars/1']);
    const wrong = shoal(['export', run, '--format', 'onnx']);
    expect(wrong.stderr).toMatch(/--format takes keras, h5, tfjs; got "onnx"/);
    // A .keras goes out as .keras or tfjs; asked for .h5 it is refused and nothing is written.
    const h5 = shoal(['export', run, '--format', 'h5', '--out', join(dir, 'cli-out')]);
    expect(h5.stderr).toMatch(/mlp\.keras is a Keras 3 \.keras archive; Shoal exports it as \.keras \(its own format\) or tfjs, not as \.h5/);
    expect(existsSync(join(dir, 'cli-out'))).toBe(false);
  }, 240_000);
});
