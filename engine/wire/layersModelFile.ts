import { mkdirSync, readFileSync, realpathSync, renameSync, rmSync, statSync } from 'node:fs';
import { dirname, isAbsolute, join, relative, resolve, sep } from 'node:path';
import { syncFolder, writeNewFileDurably } from './durableFiles.js';
import { explainFileError } from './fileErrors.js';

/**
 * A user's tfjs LayersModel on disk (`model.json` + `.bin` shards), read and written without tfjs,
 * following tfjs-core's io conventions (io_utils.decodeWeights, weights_loader): each
 * `weightsManifest` group's `paths` are concatenated in order and its weights lie back to back in
 * manifest order; quantized weights are dequantized to float32 the way tfjs does.
 */

export type LayersWeightDtype = 'float32' | 'int32' | 'bool';
export interface LayersWeight {
  shape: number[];
  dtype: LayersWeightDtype;
  values: Float32Array;
}
export interface LayersModelRead {
  document: Record<string, unknown>;
  topology: unknown;
  /** null when model.json has no weightsManifest (topology only). */
  weights: Map<string, LayersWeight> | null;
  /** Manifest order, across groups. */
  weightNames: string[];
}
export interface LayersWeightToWrite {
  name: string;
  shape: number[];
  dtype?: 'float32' | 'int32';
  values: Float32Array;
}

export const WEIGHTS_FILE = 'group1-shard1of1.bin';
const BYTES: Record<string, number> = { float32: 4, int32: 4, bool: 1, uint8: 1, uint16: 2, float16: 2 };

export function readLayersModel(modelJsonPath: string): LayersModelRead {
  let text: string;
  try {
    text = readFileSync(modelJsonPath, 'utf8');
  } catch (err) {
    const why = (err as NodeJS.ErrnoException).code === 'ENOENT' ? 'does not exist' : (err as Error).message;
    throw new Error(`Cannot read model file ${modelJsonPath}: ${why}. Point Shoal at the model.json that model.save() wrote.`);
  }
  let doc: unknown;
  try {
    doc = JSON.parse(text);
  } catch (err) {
    throw new Error(`Model file ${modelJsonPath} is not valid JSON (${(err as Error).message}). Save the model again with model.save().`);
  }
  if (!isRecord(doc)) throw new Error(`Model file ${modelJsonPath} is not a JSON object. Save the model again with model.save().`);
  return readLayersModelDocument(doc, dirname(modelJsonPath), modelJsonPath);
}

/** Same as readLayersModel for an already parsed document; `.bin` paths resolve against baseDir. */
export function readLayersModelDocument(doc: Record<string, unknown>, baseDir: string, source = join(baseDir, 'model.json')): LayersModelRead {
  if (doc.modelTopology == null) {
    throw new Error(`Model file ${source} has no modelTopology: it is not a tfjs LayersModel (a weights-only or graph-model file?). Save the Keras/tfjs-layers model with model.save().`);
  }
  const manifest = doc.weightsManifest;
  if (manifest == null) return { document: doc, topology: doc.modelTopology, weights: null, weightNames: [] };
  if (!Array.isArray(manifest)) throw new Error(`Model file ${source}: weightsManifest is not a list of groups. Save the model again with model.save().`);
  const weights = new Map<string, LayersWeight>();
  const weightNames: string[] = [];
  manifest.forEach((group: unknown, g) => {
    if (!isRecord(group) || !Array.isArray(group.paths) || !Array.isArray(group.weights) || !group.paths.every((p) => typeof p === 'string')) {
      throw new Error(`Model file ${source}: weightsManifest group ${g + 1} needs "paths" (strings) and "weights" (a list). Save the model again with model.save().`);
    }
    const specs = group.weights.map((w: unknown) => checkSpec(w, source));
    const files = (group.paths as string[]).map((p) => weightFileIn(baseDir, p, source));
    const expected = groupBytes(specs);
    const bytes = readGroup(files, source, expected);
    let offset = 0;
    for (const spec of specs) {
      const width = BYTES[spec.quant?.dtype ?? spec.dtype];
      const values = decode(spec, bytes.subarray(offset, offset + spec.size * width));
      offset += spec.size * width;
      if (weights.has(spec.name)) throw new Error(`Model file ${source} lists weight '${spec.name}' twice. Save the model again with model.save().`);
      weights.set(spec.name, { shape: spec.shape, dtype: spec.dtype, values });
      weightNames.push(spec.name);
    }
  });
  return { document: doc, topology: doc.modelTopology, weights, weightNames };
}

/**
 * Write `dir/model.json` (the document with its modelTopology untouched and one new weightsManifest
 * group) and `dir/group1-shard1of1.bin`. Each file goes to a temporary name, is fsynced, then
 * renamed; the .bin first, so model.json never names a half-written .bin. Writing into a folder that
 * already holds a model with the same .bin name can, after a crash between the two renames, pair the
 * old model.json with the new .bin: write into a fresh folder when that matters.
 */
export function writeLayersModel(
  dir: string,
  document: Record<string, unknown>,
  weights: LayersWeightToWrite[],
  options: { generatedBy?: string } = {},
): { modelJson: string; weightsFile: string; bytes: number } {
  if (document.modelTopology == null) throw new Error(`Cannot write a LayersModel to ${dir}: the document has no modelTopology. Pass the document readLayersModel returned.`);
  const seen = new Set<string>();
  const parts: Buffer[] = [];
  const entries = weights.map((w) => {
    const dtype = w.dtype ?? 'float32';
    const size = w.shape.reduce((a, b) => a * b, 1);
    if (seen.has(w.name)) throw new Error(`Cannot write ${dir}: weight '${w.name}' is given twice.`);
    seen.add(w.name);
    if (w.values.length !== size) throw new Error(`Cannot write ${dir}: weight '${w.name}' has ${w.values.length} values but shape [${w.shape.join(', ')}] needs ${size}.`);
    if (dtype === 'int32') {
      const ints = new Int32Array(size);
      for (let i = 0; i < size; i++) {
        if (!Number.isInteger(w.values[i])) throw new Error(`Cannot write ${dir}: int32 weight '${w.name}' holds ${w.values[i]} at index ${i}, which is not an integer.`);
        ints[i] = w.values[i];
      }
      parts.push(Buffer.from(ints.buffer));
    } else {
      parts.push(Buffer.from(w.values.buffer, w.values.byteOffset, w.values.byteLength));
    }
    return { name: w.name, shape: [...w.shape], dtype };
  });
  const doc: Record<string, unknown> = {
    ...document,
    format: 'layers-model',
    generatedBy: options.generatedBy ?? document.generatedBy ?? 'Shoal',
    weightsManifest: [{ paths: [WEIGHTS_FILE], weights: entries }],
  };
  mkdirSync(dir, { recursive: true });
  const bin = Buffer.concat(parts);
  const weightsFile = join(dir, WEIGHTS_FILE);
  const modelJson = join(dir, 'model.json');
  writeDurably(weightsFile, bin);
  writeDurably(modelJson, Buffer.from(JSON.stringify(doc), 'utf8'));
  syncFolder(dir);
  return { modelJson, weightsFile, bytes: bin.length };
}

interface Spec {
  name: string;
  shape: number[];
  size: number;
  dtype: LayersWeightDtype;
  quant?: { dtype: 'uint8' | 'uint16' | 'float16'; scale?: number; min?: number };
}

/** Bytes a manifest group's files hold together: its weights back to back, each at its stored width. */
function groupBytes(specs: Spec[]): number {
  return specs.reduce((n, s) => n + s.size * BYTES[s.quant?.dtype ?? s.dtype], 0);
}

/**
 * Bytes each weightsManifest group of a model document needs in its files, in group order; throws
 * (naming `source`) on a malformed manifest, as reading the model would.
 */
export function manifestGroupBytes(doc: Record<string, unknown>, source: string): Array<{ paths: string[]; bytes: number }> {
  const manifest = doc.weightsManifest;
  if (manifest == null) return [];
  if (!Array.isArray(manifest)) throw new Error(`Model file ${source}: weightsManifest is not a list of groups. Save the model again with model.save().`);
  return manifest.map((group: unknown, g) => {
    if (!isRecord(group) || !Array.isArray(group.paths) || !Array.isArray(group.weights) || !group.paths.every((p) => typeof p === 'string')) {
      throw new Error(`Model file ${source}: weightsManifest group ${g + 1} needs "paths" (strings) and "weights" (a list). Save the model again with model.save().`);
    }
    return { paths: group.paths as string[], bytes: groupBytes(group.weights.map((w: unknown) => checkSpec(w, source))) };
  });
}

function checkSpec(w: unknown, source: string): Spec {
  const again = 'Save the model again with model.save().';
  if (!isRecord(w) || typeof w.name !== 'string' || !Array.isArray(w.shape) || !w.shape.every((d) => Number.isInteger(d) && d >= 0)) {
    throw new Error(`Model file ${source}: a weightsManifest entry lacks a name or a valid shape (${JSON.stringify(w)?.slice(0, 120)}). ${again}`);
  }
  const { name, dtype, quantization: q } = w;
  if (dtype !== 'float32' && dtype !== 'int32' && dtype !== 'bool') {
    throw new Error(`Model file ${source}: weight '${name}' has dtype ${JSON.stringify(dtype)}, which Shoal cannot read (supported: float32, int32, bool). Convert the model so its weights are float32.`);
  }
  const spec: Spec = { name, shape: w.shape as number[], size: (w.shape as number[]).reduce((a, b) => a * b, 1), dtype };
  if (q == null) return spec;
  const qd = isRecord(q) ? q.dtype : undefined;
  if (qd !== 'uint8' && qd !== 'uint16' && qd !== 'float16') {
    throw new Error(`Model file ${source}: weight '${name}' has unknown quantization dtype ${JSON.stringify(qd)} (supported: uint8, uint16, float16). Re-convert the model with one of those or without quantization.`);
  }
  const qr = q as Record<string, unknown>;
  if (qd === 'float16' && dtype !== 'float32') throw new Error(`Model file ${source}: weight '${name}' is float16-quantized but has dtype ${dtype}; float16 only applies to float32 weights. ${again}`);
  if (qd !== 'float16' && dtype === 'bool') throw new Error(`Model file ${source}: weight '${name}' is a bool weight with ${qd} quantization, which tfjs cannot decode. ${again}`);
  if (qd !== 'float16' && (typeof qr.scale !== 'number' || typeof qr.min !== 'number')) {
    throw new Error(`Model file ${source}: weight '${name}' is ${qd}-quantized but lacks numeric "scale" and "min". ${again}`);
  }
  spec.quant = { dtype: qd, scale: qr.scale as number | undefined, min: qr.min as number | undefined };
  return spec;
}

/** Whether `path` lies inside `dir` (both resolved): not the folder itself, not above it. */
function isInside(dir: string, path: string): boolean {
  const rel = relative(dir, path);
  return rel !== '' && !rel.startsWith(`..${sep}`) && rel !== '..' && !isAbsolute(rel);
}

/**
 * The file a manifest path names, which must lie in the model's folder (or a folder below it): a
 * relative path without `..`, that is no link out of the folder either. So a shared model.json can
 * never make Shoal read — and train on, and export — another file of the user's.
 */
export function weightFileIn(baseDir: string, path: string, source: string): string {
  const folder = resolve(baseDir);
  const refuse = (why: string) =>
    new Error(`Model file ${source} names the weights file ${JSON.stringify(path)}, which ${why}; Shoal reads only weights in the model's folder ${folder}. Copy the .bin files beside model.json and name them by file name (as model.save() does).`);
  if (path === '' || path.includes('\0')) throw refuse('is not a file name');
  if (isAbsolute(path)) throw refuse('is an absolute path');
  if (path.split(/[\\/]/).includes('..')) throw refuse('climbs out of the folder (..)');
  const file = resolve(folder, path);
  if (!isInside(folder, file)) throw refuse('lies outside the folder');
  let real: string;
  try {
    real = realpathSync(file);
  } catch (err) {
    if ((err as NodeJS.ErrnoException).code === 'ENOENT') {
      throw new Error(`Weight file ${file} (listed in ${source}) is missing. Copy every .bin that model.save() wrote next to model.json.`);
    }
    throw explainFileError(err, `Weight file (listed in ${source})`, file);
  }
  if (!isInside(realpathSync(folder), real)) throw refuse(`is a link to ${real}, outside the folder`);
  if (!statSync(real).isFile()) throw refuse('is not a regular file');
  return file;
}

/**
 * Check, without reading them, that the weights files a model document names lie in `baseDir` and
 * hold exactly the bytes its manifest needs: what reading the model would refuse, found before a job
 * starts.
 */
export function checkWeightFiles(doc: Record<string, unknown>, baseDir: string, source: string): void {
  for (const group of manifestGroupBytes(doc, source)) {
    checkGroupSize(group.paths.map((p) => weightFileIn(baseDir, p, source)), source, group.bytes);
  }
}

function checkGroupSize(files: string[], source: string, expected: number): void {
  const found = files.reduce((n, file) => n + statSync(file).size, 0);
  if (found < expected) {
    throw new Error(`Weight file ${files.join(' + ')} (for ${source}) is truncated: expected ${expected} bytes, found ${found}. Copy the .bin again or save the model again.`);
  }
  if (found > expected) {
    throw new Error(`Weight file ${files.join(' + ')} (for ${source}) holds ${found} bytes, ${found - expected} more than the ${expected} its weightsManifest needs: it is not the .bin saved with this model.json. Copy the right .bin or save the model again.`);
  }
}

/** A group's files, concatenated: exactly the bytes its weights need (sizes are checked before reading). */
function readGroup(files: string[], source: string, expected: number): Buffer {
  checkGroupSize(files, source, expected);
  const bytes = Buffer.concat(files.map((file) => readWeightFile(file, source)));
  if (bytes.length !== expected) throw new Error(`Weight file ${files.join(' + ')} (for ${source}) changed while it was read. Try again.`);
  return bytes;
}

function readWeightFile(file: string, source: string): Buffer {
  try {
    return readFileSync(file);
  } catch (err) {
    throw explainFileError(err, `Weight file (listed in ${source})`, file);
  }
}

/** tfjs-core io_utils.decodeWeight, to float32 values. */
function decode(spec: Spec, raw: Buffer): Float32Array {
  // Copy to an aligned buffer: typed-array views need offsets that are multiples of the element size.
  const bytes = new Uint8Array(raw);
  const q = spec.quant;
  if (q == null) {
    if (spec.dtype === 'float32') return new Float32Array(bytes.buffer);
    if (spec.dtype === 'int32') return Float32Array.from(new Int32Array(bytes.buffer));
    return Float32Array.from(bytes);
  }
  if (q.dtype === 'float16') return decodeFloat16(new Uint16Array(bytes.buffer));
  const quantized = q.dtype === 'uint8' ? bytes : new Uint16Array(bytes.buffer);
  const out = new Float32Array(quantized.length);
  const scale = q.scale as number;
  const min = q.min as number;
  for (let i = 0; i < quantized.length; i++) {
    const v = quantized[i] * scale + min;
    out[i] = spec.dtype === 'int32' ? Math.round(v) : v;
  }
  return out;
}

let float16Tables: { mantissa: Uint32Array; exponent: Uint32Array; offset: Uint32Array } | null = null;

/** tfjs-core io_utils.getFloat16Decoder (fox-toolkit table method), bit for bit. */
function decodeFloat16(halves: Uint16Array): Float32Array {
  if (float16Tables == null) {
    const mantissa = new Uint32Array(2048);
    for (let i = 1; i < 1024; i++) {
      let m = i << 13;
      let e = 0;
      while ((m & 0x00800000) === 0) {
        e -= 0x00800000;
        m <<= 1;
      }
      mantissa[i] = (m & ~0x00800000) | (e + 0x38800000);
    }
    for (let i = 1024; i < 2048; i++) mantissa[i] = 0x38000000 + ((i - 1024) << 13);
    const exponent = new Uint32Array(64);
    exponent[31] = 0x47800000;
    exponent[32] = 0x80000000;
    exponent[63] = 0xc7800000;
    for (let i = 1; i < 31; i++) exponent[i] = i << 23;
    for (let i = 33; i < 63; i++) exponent[i] = 0x80000000 + ((i - 32) << 23);
    const offset = new Uint32Array(64).fill(1024);
    offset[0] = offset[32] = 0;
    float16Tables = { mantissa, exponent, offset };
  }
  const { mantissa, exponent, offset } = float16Tables;
  const bits = new Uint32Array(halves.length);
  for (let i = 0; i < halves.length; i++) {
    const h = halves[i];
    bits[i] = mantissa[offset[h >> 10] + (h & 0x3ff)] + exponent[h >> 10];
  }
  return new Float32Array(bits.buffer);
}

function writeDurably(file: string, data: Buffer): void {
  const tmp = `${file}.${process.pid}.${Date.now()}.tmp`;
  try {
    writeNewFileDurably(tmp, data, 0o644);
    renameSync(tmp, file);
  } catch (err) {
    rmSync(tmp, { force: true });
    const code = (err as NodeJS.ErrnoException).code;
    const why = code === 'ENOSPC' ? 'the disk is full' : code === 'EACCES' || code === 'EROFS' ? 'the folder is not writable' : (err as Error).message;
    throw new Error(`Cannot write ${file}: ${why}. Free space or choose another output folder.`);
  }
}

function isRecord(v: unknown): v is Record<string, unknown> {
  return typeof v === 'object' && v !== null && !Array.isArray(v);
}
