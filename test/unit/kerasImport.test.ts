import { execFileSync } from 'node:child_process';
import { copyFileSync, existsSync, mkdtempSync, readdirSync, readFileSync, rmSync, statSync, truncateSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { layersModelOf } from '../../agents/exec/graph/modelOfGraph.js';
import { selectBackend } from '../../agents/backend/selectBackend.js';
import { h5Ready } from '../../engine/node/keras/h5.js';
import { convertKerasFile } from '../../engine/node/keras/kerasConvert.js';
import { loadModel } from '../../engine/node/modelRef.js';
import { modelsRoot } from '../../engine/node/modelStore.js';
import { h5pyPython } from '../support/h5pyPython.js';

/**
 * Keras files written by h5py in Keras's own layout (test/fixtures/keras/make_keras_files.py) open
 * as models: tfjs-layers builds each from the converted topology, and every weight it holds equals
 * the fixture's dataset, read back here by h5py. Bad files are refused naming the layer and the path.
 */
const python = h5pyPython('kerasImport.test');

let dir: string;
const MODELS = ['mlp', 'cnn', 'two_outputs', 'nested', 'lstm', 'transformer'];

/** Every dataset of a Keras file as h5py reads it: path → flat values. */
function h5pyWeights(file: string): Record<string, { shape: number[]; values: number[] }> {
  const script = `
import h5py, io, json, sys, zipfile
path = sys.argv[1]
f = h5py.File(io.BytesIO(zipfile.ZipFile(path).read('model.weights.h5'))) if path.endswith('.keras') else h5py.File(path)
out = {}
f.visititems(lambda n, o: out.__setitem__(n, {'shape': list(o.shape), 'values': o[...].ravel().tolist()}) if isinstance(o, h5py.Dataset) else None)
print(json.dumps(out))`;
  return JSON.parse(execFileSync(python!, ['-c', script, file], { encoding: 'utf8' })) as Record<string, { shape: number[]; values: number[] }>;
}

beforeAll(async () => {
  await selectBackend();
  await h5Ready();
  dir = mkdtempSync(join(tmpdir(), 'shoal-keras-'));
  process.env.SHOAL_DATA_DIR = join(dir, 'data');
  execFileSync(python!, [join(__dirname, '../fixtures/keras/make_keras_files.py'), dir]);
}, 60_000);
afterAll(() => rmSync(dir, { recursive: true, force: true }));

describe('Keras files import with their weights', () => {
  for (const file of [...MODELS.map((m) => `${m}.keras`), 'mlp.h5']) {
    it(`${file}: tfjs-layers builds it and holds every weight of the file`, async () => {
      const { modelJson } = convertKerasFile(join(dir, file), modelsRoot());
      const graph = loadModel(join(dir, file));
      expect(graph.source?.modelFile).toBe(modelJson);
      const source = JSON.parse(readFileSync(join(modelJson, '..', 'keras-source.json'), 'utf8')) as { weights: Array<{ name: string; path: string }> };
      const fixture = h5pyWeights(join(dir, file));
      const model = await layersModelOf(graph, 1);
      const built = new Map(model.weights.map((w) => [w.originalName, w]));
      expect(new Set(source.weights.map((w) => w.name))).toEqual(new Set(built.keys()));
      const inFile = Object.keys(fixture).filter((p) => !p.startsWith('optimizer'));
      expect(source.weights.map((w) => w.path.replace(/^\//, '')).sort()).toEqual(inFile.sort());
      for (const w of source.weights) {
        const expected = fixture[w.path];
        const variable = built.get(w.name)!;
        expect(variable.shape, w.name).toEqual(expected.shape);
        expect(Array.from(variable.read().dataSync()), w.name).toEqual(Array.from(Float32Array.from(expected.values)));
      }
    }, 60_000);
  }
});

/** A copy of a fixture changed by Python: `h5` edits model.weights.h5 (`f`), `config` edits config.json (`c`). */
function broken(from: string, to: string, edit: { h5?: string; config?: string }): string {
  const script = `
import h5py, io, json, sys, zipfile
src, dst = sys.argv[1], sys.argv[2]
if src.endswith('.h5'):
    import shutil; shutil.copy(src, dst)
    f = h5py.File(dst, 'a')
    ${edit.h5 ?? 'pass'}
    f.close()
    sys.exit(0)
z = zipfile.ZipFile(src)
buf = io.BytesIO(z.read('model.weights.h5'))
f = h5py.File(buf, 'a')
${edit.h5 ?? 'pass'}
f.close()
c = json.loads(z.read('config.json'))
${edit.config ?? 'pass'}
with zipfile.ZipFile(dst, 'w') as out:
    out.writestr('metadata.json', z.read('metadata.json'))
    out.writestr('config.json', json.dumps(c))
    out.writestr('model.weights.h5', buf.getvalue())`;
  const file = join(dir, to);
  execFileSync(python!, ['-c', script, join(dir, from), file]);
  return file;
}

describe('a Keras file whose parts disagree is refused, naming the layer and the path, and nothing is stored', () => {
  const stored = () => (existsSync(modelsRoot()) ? readdirSync(modelsRoot()).sort() : []);
  const refused = (file: string, message: RegExp) => {
    const before = stored();
    expect(() => loadModel(file)).toThrow(message);
    expect(stored()).toEqual(before);
  };

  it('a truncated .keras', () => {
    const file = join(dir, 'truncated.keras');
    copyFileSync(join(dir, 'mlp.keras'), file);
    truncateSync(file, Math.floor(statSync(file).size * 0.6));
    refused(file, /truncated\.keras is not a complete \.keras archive: its model\.weights\.h5 is cut off/);
  });

  it('a missing dataset', () => {
    refused(broken('mlp.keras', 'missing.keras', { h5: "del f['layers/dense_1/vars/1']" }), /layer "dense_1" \(Dense\) needs its weight dense_1\/bias at layers\/dense_1\/vars\/1, which does not exist/);
  });

  it('a dataset of the wrong shape', () => {
    refused(broken('mlp.keras', 'shape.keras', { h5: "del f['layers/dense/vars/0']; f['layers/dense/vars/0'] = __import__('numpy').zeros((6, 7), 'float32')" }), /layer "dense" \(Dense\) has 56 weights by its config, but the file holds 50: model\.weights\.h5:layers\/dense\/vars\/0 \[6, 7\]/);
  });

  it('weights of a layer the config does not have', () => {
    refused(broken('mlp.keras', 'extra.keras', { h5: "f['layers/dense_2/vars/0'] = __import__('numpy').zeros((3,), 'float32')" }), /holds the weight layers\/dense_2\/vars\/0, which no layer of config\.json has/);
  });

  it('a custom layer class', () => {
    refused(broken('mlp.keras', 'custom.keras', { config: "c['config']['layers'][2].update({'class_name': 'Scaler', 'module': 'my_layers', 'registered_name': 'Custom>Scaler'})" }), /layer "dense_1" has the custom class Scaler \(Custom>Scaler\)/);
  });

  it('a Keras 2 .h5 whose weight_names disagree with its config', () => {
    refused(broken('mlp.h5', 'names.h5', { h5: "f['model_weights/dense_1'].attrs['weight_names'] = [b'dense_1/kernel:0']" }), /layer "dense_1" \(Dense\) has 2 weights by its config but 1 in model_weights\/dense_1/);
  });
});
