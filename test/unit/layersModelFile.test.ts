import * as tf from '@tensorflow/tfjs-core';
import '@tensorflow/tfjs-backend-cpu';
import '@tensorflow/tfjs-core/dist/public/chained_ops/register_all_chained_ops';
import * as tfl from '@tensorflow/tfjs-layers';
import { appendFileSync, mkdirSync, mkdtempSync, readdirSync, readFileSync, renameSync, rmSync, symlinkSync, truncateSync, unlinkSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { readLayersModel, readLayersModelDocument, writeLayersModel } from '../../engine/wire/layersModelFile.js';

const work = mkdtempSync(join(tmpdir(), 'shoal-layers-'));
afterAll(() => rmSync(work, { recursive: true, force: true }));
beforeAll(async () => {
  await tf.setBackend('cpu');
});

/** Embedding -> Flatten -> Dense -> BatchNorm -> nested functional model (Dense). */
function buildModel(): tfl.LayersModel {
  const innerIn = tfl.input({ shape: [5] });
  const tower = tfl.model({ name: 'tower', inputs: innerIn, outputs: tfl.layers.dense({ units: 2, name: 'head' }).apply(innerIn) as tfl.SymbolicTensor });
  const input = tfl.input({ shape: [3] });
  let x = tfl.layers.embedding({ inputDim: 10, outputDim: 4 }).apply(input) as tfl.SymbolicTensor;
  x = tfl.layers.flatten().apply(x) as tfl.SymbolicTensor;
  x = tfl.layers.dense({ units: 5, name: 'hidden' }).apply(x) as tfl.SymbolicTensor;
  x = tfl.layers.batchNormalization().apply(x) as tfl.SymbolicTensor;
  return tfl.model({ inputs: input, outputs: tower.apply(x) as tfl.SymbolicTensor });
}

/** What tfjs-node's file:// saver does, except the weight bytes are split over two shards at an odd byte. */
async function saveToFolder(model: tfl.LayersModel, dir: string): Promise<tf.io.ModelArtifacts> {
  mkdirSync(dir, { recursive: true });
  let saved: tf.io.ModelArtifacts | undefined;
  await model.save(
    tf.io.withSaveHandler(async (artifacts) => {
      saved = artifacts;
      const bytes = Buffer.from(tf.io.CompositeArrayBuffer.join(artifacts.weightData!));
      writeFileSync(join(dir, 'group1-shard1of2.bin'), bytes.subarray(0, 37));
      writeFileSync(join(dir, 'group1-shard2of2.bin'), bytes.subarray(37));
      const json = {
        modelTopology: artifacts.modelTopology,
        format: artifacts.format,
        generatedBy: artifacts.generatedBy,
        convertedBy: artifacts.convertedBy,
        weightsManifest: [{ paths: ['group1-shard1of2.bin', 'group1-shard2of2.bin'], weights: artifacts.weightSpecs }],
      };
      writeFileSync(join(dir, 'model.json'), JSON.stringify(json));
      return { modelArtifactsInfo: { dateSaved: new Date(), modelTopologyType: 'JSON' } };
    }),
  );
  return saved!;
}

/** tfjs-layers' own loader reading a model.json folder from disk, as tfjs-node's file:// handler does. */
function folderHandler(dir: string): tf.io.IOHandler {
  return {
    async load() {
      const json = JSON.parse(readFileSync(join(dir, 'model.json'), 'utf8')) as tf.io.ModelJSON;
      const weightData = json.weightsManifest.flatMap((g) => g.paths.map((p) => new Uint8Array(readFileSync(join(dir, p))).buffer));
      const weightSpecs = json.weightsManifest.flatMap((g) => g.weights);
      return { modelTopology: json.modelTopology, format: json.format, generatedBy: json.generatedBy, convertedBy: json.convertedBy, weightSpecs, weightData };
    },
  };
}

describe('readLayersModel / writeLayersModel with a real tfjs-layers model', () => {
  it('reads every weight under its manifest name, writes trained values back, and tfjs loads them', async () => {
    const model = buildModel();
    const src = join(work, 'user-model');
    const artifacts = await saveToFolder(model, src);
    const read = readLayersModel(join(src, 'model.json'));

    // tfjs's manifest names are the variables' originalName, in model.weights order (trainable first).
    expect(read.weightNames).toEqual(model.weights.map((w) => w.originalName));
    expect(read.weightNames).toEqual(artifacts.weightSpecs!.map((s) => s.name));
    expect(read.weightNames).toContain('hidden/kernel');
    expect(read.weightNames).toContain('head/kernel'); // nested model: no 'tower/' prefix
    expect(read.weightNames.some((n) => /^embedding_Embedding\d+\/embeddings$/.test(n))).toBe(true);
    expect(read.weightNames.slice(-2).map((n) => n.split('/')[1])).toEqual(['moving_mean', 'moving_variance']);
    model.weights.forEach((w) => {
      const got = read.weights!.get(w.originalName)!;
      expect(got.shape).toEqual(w.shape);
      expect(got.dtype).toBe('float32');
      expect(Array.from(got.values)).toEqual(Array.from(w.read().dataSync()));
    });
    expect(read.topology).toEqual(artifacts.modelTopology);

    const trained = read.weightNames.map((name) => {
      const w = read.weights!.get(name)!;
      return { name, shape: w.shape, values: w.values.map((v, i) => v * 2 + 1 + i / 64) };
    });
    const out = join(work, 'trained');
    const before = JSON.stringify(read.document);
    const result = writeLayersModel(out, read.document, trained, { generatedBy: 'Shoal test' });
    expect(JSON.stringify(read.document)).toBe(before); // caller's document untouched
    expect(result.bytes).toBe(trained.reduce((n, w) => n + 4 * w.values.length, 0));
    expect(readdirSync(out).sort()).toEqual(['group1-shard1of1.bin', 'model.json']); // no temp files left

    const json = JSON.parse(readFileSync(result.modelJson, 'utf8'));
    expect(json.modelTopology).toEqual(read.topology);
    expect(json.format).toBe('layers-model');
    expect(json.generatedBy).toBe('Shoal test');
    expect(json.convertedBy).toBeNull();
    expect(json.weightsManifest).toEqual([{ paths: ['group1-shard1of1.bin'], weights: trained.map((w) => ({ name: w.name, shape: w.shape, dtype: 'float32' })) }]);

    const loaded = await tfl.loadLayersModel(folderHandler(out));
    loaded.weights.forEach((w) => {
      const want = trained.find((t) => t.name === w.originalName)!;
      expect(Array.from(w.read().dataSync())).toEqual(Array.from(want.values));
    });
    // Same topology: the original model with the trained weights predicts exactly what the reloaded one does.
    model.setWeights(trained.map((w) => tf.tensor(w.values, w.shape)));
    const x = tf.tensor2d([[1, 2, 3], [9, 0, 4]]);
    expect(Array.from((loaded.predict(x) as tf.Tensor).dataSync())).toEqual(Array.from((model.predict(x) as tf.Tensor).dataSync()));

    const again = readLayersModel(result.modelJson);
    expect(again.weightNames).toEqual(read.weightNames);
    for (const w of trained) expect(Array.from(again.weights!.get(w.name)!.values)).toEqual(Array.from(w.values));
  });

  it('writes int32 weights as int32 and rejects bad input', () => {
    const doc = { modelTopology: { class_name: 'Model' }, convertedBy: null };
    const out = join(work, 'ints');
    const r = writeLayersModel(out, doc, [
      { name: 'step', shape: [], dtype: 'int32', values: new Float32Array([-7]) },
      { name: 'w', shape: [2], values: new Float32Array([0.5, -1]) },
    ]);
    expect(Array.from(new Int32Array(new Uint8Array(readFileSync(r.weightsFile)).buffer, 0, 1))).toEqual([-7]);
    const back = readLayersModel(r.modelJson);
    expect(back.weights!.get('step')).toEqual({ shape: [], dtype: 'int32', values: new Float32Array([-7]) });
    expect(back.document.generatedBy).toBe('Shoal');
    expect(() => writeLayersModel(out, doc, [{ name: 'a', shape: [2], dtype: 'int32', values: new Float32Array([1.5, 2]) }])).toThrow(/not an integer/);
    expect(() => writeLayersModel(out, doc, [{ name: 'a', shape: [3], values: new Float32Array(2) }])).toThrow(/2 values but shape \[3\] needs 3/);
    expect(() => writeLayersModel(out, {}, [])).toThrow(/no modelTopology/);
  });
});

describe('quantized and hand-made manifests decode exactly as tfjs-core does', () => {
  it('uint8, uint16 (int32 weight), float16, bool and int32 across two groups and split files', () => {
    const dir = join(work, 'quantized');
    mkdirSync(dir, { recursive: true });
    const g1Specs: tf.io.WeightsManifestEntry[] = [
      { name: 'q8', shape: [2, 3], dtype: 'float32', quantization: { dtype: 'uint8', scale: 0.1, min: -1.3 } },
      { name: 'h', shape: [7], dtype: 'float32', quantization: { dtype: 'float16' } },
      { name: 'q16', shape: [3], dtype: 'int32', quantization: { dtype: 'uint16', scale: 0.37, min: -5 } },
    ];
    const g1 = Buffer.concat([
      Buffer.from([0, 1, 13, 128, 254, 255]),
      Buffer.from(new Uint16Array([0x3c00, 0xc000, 0x3555, 0x7c00, 0x0001, 0x8000, 0x7bff]).buffer),
      Buffer.from(new Uint16Array([0, 7, 65535]).buffer),
    ]);
    const g2Specs: tf.io.WeightsManifestEntry[] = [
      { name: 'flags', shape: [3], dtype: 'bool' },
      { name: 'ids', shape: [2], dtype: 'int32' },
      { name: 'f', shape: [1], dtype: 'float32' },
    ];
    const g2 = Buffer.concat([Buffer.from([1, 0, 1]), Buffer.from(new Int32Array([-3, 123456]).buffer), Buffer.from(new Float32Array([0.1]).buffer)]);
    writeFileSync(join(dir, 'a1.bin'), g1.subarray(0, 5));
    writeFileSync(join(dir, 'a2.bin'), g1.subarray(5));
    writeFileSync(join(dir, 'b.bin'), g2);
    const doc = { modelTopology: {}, weightsManifest: [{ paths: ['a1.bin', 'a2.bin'], weights: g1Specs }, { paths: ['b.bin'], weights: g2Specs }] };
    const read = readLayersModelDocument(doc, dir);
    expect(read.weightNames).toEqual(['q8', 'h', 'q16', 'flags', 'ids', 'f']);

    const oracle = { ...tf.io.decodeWeights(new Uint8Array(g1).buffer, g1Specs), ...tf.io.decodeWeights(new Uint8Array(g2).buffer, g2Specs) };
    for (const name of read.weightNames) {
      const got = read.weights!.get(name)!;
      const want = oracle[name];
      expect(got.shape).toEqual(want.shape);
      expect(got.dtype).toBe(want.dtype);
      expect(Array.from(got.values)).toEqual(Array.from(want.dataSync(), Number));
    }
    expect(Array.from(read.weights!.get('h')!.values.slice(0, 2))).toEqual([1, -2]);
    expect(Object.is(read.weights!.get('h')!.values[5], -0)).toBe(true);
    expect(read.weights!.get('q16')!.values[1]).toBe(Math.round(7 * 0.37 - 5));
  });

  it('rejects unknown dtypes and quantization with the file named', () => {
    const dir = join(work, 'dtypes');
    mkdirSync(dir, { recursive: true });
    writeFileSync(join(dir, 'w.bin'), Buffer.alloc(16));
    const doc = (entry: object) => ({ modelTopology: {}, weightsManifest: [{ paths: ['w.bin'], weights: [entry] }] });
    expect(() => readLayersModelDocument(doc({ name: 's', shape: [1], dtype: 'string' }), dir)).toThrow(/model\.json: weight 's' has dtype "string".*supported: float32, int32, bool/);
    expect(() => readLayersModelDocument(doc({ name: 'q', shape: [1], dtype: 'float32', quantization: { dtype: 'int8', scale: 1, min: 0 } }), dir)).toThrow(
      /weight 'q' has unknown quantization dtype "int8"/,
    );
    expect(() => readLayersModelDocument(doc({ name: 'q', shape: [1], dtype: 'float32', quantization: { dtype: 'uint8' } }), dir)).toThrow(/lacks numeric "scale" and "min"/);
  });
});

describe('broken files', () => {
  async function savedCopy(name: string): Promise<string> {
    const dir = join(work, name);
    await saveToFolder(buildModel(), dir);
    return dir;
  }

  it('a truncated .bin says how many bytes are missing', async () => {
    const dir = await savedCopy('truncated');
    const expected = readFileSync(join(dir, 'group1-shard1of2.bin')).length + readFileSync(join(dir, 'group1-shard2of2.bin')).length;
    truncateSync(join(dir, 'group1-shard2of2.bin'), readFileSync(join(dir, 'group1-shard2of2.bin')).length - 3);
    expect(() => readLayersModel(join(dir, 'model.json'))).toThrow(`truncated: expected ${expected} bytes, found ${expected - 3}`);
    expect(() => readLayersModel(join(dir, 'model.json'))).toThrow(/group1-shard2of2\.bin/);
  });

  it('a missing .bin is named', async () => {
    const dir = await savedCopy('missing');
    unlinkSync(join(dir, 'group1-shard1of2.bin'));
    expect(() => readLayersModel(join(dir, 'model.json'))).toThrow(new RegExp(`Weight file ${join(dir, 'group1-shard1of2.bin')} .*is missing`));
  });

  it('a .bin longer than the manifest needs is refused with both byte counts', async () => {
    const dir = await savedCopy('long');
    const expected = readFileSync(join(dir, 'group1-shard1of2.bin')).length + readFileSync(join(dir, 'group1-shard2of2.bin')).length;
    appendFileSync(join(dir, 'group1-shard2of2.bin'), Buffer.alloc(8));
    expect(() => readLayersModel(join(dir, 'model.json'))).toThrow(`holds ${expected + 8} bytes, 8 more than the ${expected} its weightsManifest needs`);
  });

  /** The saved model with its manifest's first path replaced by `path`. */
  async function withFirstPath(name: string, path: string): Promise<string> {
    const dir = await savedCopy(name);
    const file = join(dir, 'model.json');
    const json = JSON.parse(readFileSync(file, 'utf8'));
    json.weightsManifest[0].paths[0] = path;
    writeFileSync(file, JSON.stringify(json));
    return file;
  }

  it('a manifest path out of the model folder (.., absolute, a link out) is refused before anything is read', async () => {
    const outside = join(work, 'secret.bin');
    writeFileSync(outside, Buffer.alloc(37));
    const climbing = await withFirstPath('climb', '../secret.bin');
    expect(() => readLayersModel(climbing)).toThrow(`Model file ${climbing} names the weights file "../secret.bin", which climbs out of the folder (..); Shoal reads only weights in the model's folder`);
    const absolute = await withFirstPath('absolute', outside);
    expect(() => readLayersModel(absolute)).toThrow(`"${outside}", which is an absolute path`);
    const linked = await withFirstPath('link', 'group1-shard1of2.bin');
    unlinkSync(join(linked, '..', 'group1-shard1of2.bin'));
    symlinkSync(outside, join(linked, '..', 'group1-shard1of2.bin'));
    expect(() => readLayersModel(linked)).toThrow(`which is a link to ${outside}, outside the folder`);
    const itself = await withFirstPath('folder', '.');
    expect(() => readLayersModel(itself)).toThrow(/"\.", which lies outside the folder/);
  });

  it('a manifest path into a folder below model.json, or a link inside the folder, is read', async () => {
    const file = await withFirstPath('below', 'shards/group1-shard1of2.bin');
    const dir = join(file, '..');
    mkdirSync(join(dir, 'shards'));
    renameSync(join(dir, 'group1-shard1of2.bin'), join(dir, 'shards', 'group1-shard1of2.bin'));
    expect(readLayersModel(file).weightNames.length).toBeGreaterThan(0);
    symlinkSync('shards/group1-shard1of2.bin', join(dir, 'inside-link.bin'));
    const json = JSON.parse(readFileSync(file, 'utf8'));
    json.weightsManifest[0].paths[0] = 'inside-link.bin';
    writeFileSync(file, JSON.stringify(json));
    expect(readLayersModel(file).weightNames.length).toBeGreaterThan(0);
  });

  it('bad JSON, a missing file, a missing modelTopology; topology-only files have null weights', () => {
    const dir = join(work, 'json');
    mkdirSync(dir, { recursive: true });
    const file = join(dir, 'model.json');
    writeFileSync(file, '{"modelTopology": ');
    expect(() => readLayersModel(file)).toThrow(new RegExp(`${file} is not valid JSON`));
    expect(() => readLayersModel(join(dir, 'nope.json'))).toThrow(/nope\.json: does not exist/);
    writeFileSync(file, JSON.stringify({ weightsManifest: [] }));
    expect(() => readLayersModel(file)).toThrow(new RegExp(`${file} has no modelTopology`));
    writeFileSync(file, JSON.stringify({ modelTopology: { class_name: 'Sequential' }, format: 'layers-model' }));
    const r = readLayersModel(file);
    expect(r.weights).toBeNull();
    expect(r.weightNames).toEqual([]);
    expect(r.topology).toEqual({ class_name: 'Sequential' });
  });
});
