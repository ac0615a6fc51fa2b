import { mkdirSync, mkdtempSync, rmSync, statSync, truncateSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { afterAll, describe, expect, it, vi } from 'vitest';
import type { DataSplit } from '../../engine/wire/data/dataset.js';
import { openNpy, writeNpy, type NpyArray } from '../../engine/wire/data/npy.js';
import { openNpyFolder, type NpyFolderWants } from '../../engine/wire/data/npyFolder.js';
import { syntheticDataset } from '../../engine/wire/data/syntheticData.js';

/** Counts positional reads, to see that consecutive rows are coalesced into one. */
const reads = vi.hoisted(() => ({ count: 0 }));
vi.mock('node:fs', async (importOriginal) => {
  const fs = await importOriginal<typeof import('node:fs')>();
  const readSync = ((...args: Parameters<typeof fs.readSync>) => {
    reads.count++;
    return fs.readSync(...args);
  }) as typeof fs.readSync;
  return { ...fs, readSync, default: { ...fs, readSync } };
});

/*
 * test/fixtures/npy was written by real NumPy (2.x) with:
 *   np.save('f32_3x2x2.npy', (np.arange(12, dtype=np.float32) * 0.5 - 2).reshape(3, 2, 2))
 *   np.save('i64_5.npy', np.array([-3, 0, 7, 2**40, 9], dtype=np.int64))
 *   np.save('u8_4x3.npy', np.arange(12, dtype=np.uint8).reshape(4, 3) * 20)
 *   np.save('f64_2x3.npy', np.array([[1.5, -2.25, 3e10], [0, 1e-3, -7]]))
 *   np.save('bool_4.npy', np.array([True, False, False, True]))
 *   np.save('fortran_3x4.npy', np.asfortranarray(np.arange(12, dtype=np.float32).reshape(3, 4)))
 *   np.lib.format.write_array(f, np.array([[1, -2], [3, -4], [5, -32768]], dtype=np.int16), version=(v, 0))  # v2_/v3_i2_3x2.npy
 *   np.save('unicode_2.npy', np.array(['ab', 'cde'])); np.save('object_2.npy', np.array([1, 'a'], dtype=object))
 *   np.save('structured_2.npy', np.zeros(2, dtype=[('a', '<f4'), ('b', '<i4')]))
 */
const fixtures = join(dirname(fileURLToPath(import.meta.url)), '..', 'fixtures', 'npy');
const tmp = mkdtempSync(join(tmpdir(), 'shoal-npy-'));
afterAll(() => rmSync(tmp, { recursive: true, force: true }));

let fileNo = 0;
const tmpFile = () => join(tmp, `a${fileNo++}.npy`);
function readAll(a: NpyArray): number[] {
  const out = new Float32Array(a.samples * a.rowSize);
  a.readRange(0, a.samples, out);
  return [...out];
}
const fixture = (name: string) => openNpy(join(fixtures, name));

describe('openNpy on files written by NumPy', () => {
  it('reads float32, int64, uint8, float64 and bool', () => {
    const f32 = fixture('f32_3x2x2.npy');
    expect([f32.dtype, f32.descr, f32.shape, f32.samples, f32.rowSize]).toEqual(['float32', '<f4', [3, 2, 2], 3, 4]);
    expect(readAll(f32)).toEqual(Array.from({ length: 12 }, (_, i) => i * 0.5 - 2));
    const out = new Float32Array(8);
    f32.readRows([2, 0], out);
    expect([...out]).toEqual([2, 2.5, 3, 3.5, -2, -1.5, -1, -0.5]);
    expect(readAll(fixture('i64_5.npy'))).toEqual([-3, 0, 7, 2 ** 40, 9]);
    const u8 = fixture('u8_4x3.npy');
    expect([u8.dtype, u8.descr, u8.shape]).toEqual(['uint8', '|u1', [4, 3]]);
    expect(readAll(u8)).toEqual(Array.from({ length: 12 }, (_, i) => i * 20));
    expect(readAll(fixture('f64_2x3.npy'))).toEqual([1.5, -2.25, 3e10, 0, 1e-3, -7].map(Math.fround));
    const b = fixture('bool_4.npy');
    expect([b.dtype, b.descr, readAll(b)]).toEqual(['bool', '|b1', [1, 0, 0, 1]]);
    for (const a of [f32, u8, b]) a.close();
  });

  it('reads header versions 2.0 and 3.0', () => {
    for (const name of ['v2_i2_3x2.npy', 'v3_i2_3x2.npy']) {
      const a = fixture(name);
      expect([a.dtype, a.descr, a.shape, readAll(a)]).toEqual(['int16', '<i2', [3, 2], [1, -2, 3, -4, 5, -32768]]);
      a.close();
    }
  });

  it('refuses Fortran order, strings, objects and records, saying what to do', () => {
    expect(() => fixture('fortran_3x4.npy')).toThrow(/fortran_3x4\.npy: stored in Fortran .*np\.ascontiguousarray/);
    expect(() => fixture('unicode_2.npy')).toThrow(/unicode_2\.npy: dtype '<U3'.*not numbers.*np\.save/);
    expect(() => fixture('object_2.npy')).toThrow(/object_2\.npy: dtype '\|O'/);
    expect(() => fixture('structured_2.npy')).toThrow(/structured_2\.npy: holds a structured .*np\.save/);
  });
});

describe('writeNpy and openNpy', () => {
  it('round-trips every dtype and header version', () => {
    const cases: Array<[Parameters<typeof writeNpy>[1], string, number[], string?]> = [
      [new Float32Array([1.5, -2, 3, 4]), '<f4', [1.5, -2, 3, 4]],
      [new Float64Array([0.1, -1e30, 2, 5]), '<f8', [0.1, -1e30, 2, 5].map(Math.fround)],
      [new Int8Array([-128, 127, 0, -1]), '|i1', [-128, 127, 0, -1]],
      [new Int16Array([-32768, 32767, 0, -1]), '<i2', [-32768, 32767, 0, -1]],
      [new Int32Array([-7, 2 ** 24, 0, 1]), '<i4', [-7, 2 ** 24, 0, 1]],
      [new Uint8Array([0, 255, 1, 2]), '|u1', [0, 255, 1, 2]],
      [new Uint16Array([0, 65535, 1, 2]), '<u2', [0, 65535, 1, 2]],
      [new Uint32Array([0, 2 ** 31, 1, 2]), '<u4', [0, 2 ** 31, 1, 2]],
      [new BigInt64Array([-5n, 2n ** 33n, 0n, 1n]), '<i8', [-5, 2 ** 33, 0, 1]],
      [new Uint8Array([1, 0, 0, 1]), '|b1', [1, 0, 0, 1], '|b1'],
      [new Uint16Array([0x3c00, 0xc000, 0x3800, 0x0001]), '<f2', [1, -2, 0.5, Math.fround(2 ** -24)], '<f2'],
    ];
    for (const version of [1, 2, 3] as const) {
      for (const [data, dtype, values, descr] of cases) {
        const path = tmpFile();
        writeNpy(path, data, [2, 2], { version, descr });
        const a = openNpy(path);
        expect([a.descr, a.shape, a.rowSize, readAll(a)]).toEqual([dtype, [2, 2], 2, values]);
        a.close();
      }
    }
  });

  it('reads rows out of order, coalescing consecutive ones into one read, at an offset and stride', () => {
    const path = tmpFile();
    writeNpy(path, Float32Array.from({ length: 20 }, (_, i) => i), [10, 2]);
    const a = openNpy(path);
    const out = new Float32Array(1 + 6 * 3).fill(-1);
    const before = reads.count;
    a.readRows([3, 4, 5, 0, 1, 9], out, 1, 3);
    expect(reads.count - before).toBe(3); // 3..5, 0..1, 9
    expect([...out]).toEqual([-1, 6, 7, -1, 8, 9, -1, 10, 11, -1, 0, 1, -1, 2, 3, -1, 18, 19, -1]);
    expect(() => a.readRows([10], out)).toThrow(/row index 10 is outside 0\.\.9/);
    expect(() => a.readRows([1.5], out)).toThrow(/row index 1\.5/);
    a.close();
    expect(() => a.readRows([0], out)).toThrow(/read after close/);
  });

  it('splits a long run into bounded chunks', () => {
    const path = tmpFile();
    const row = 100_000; // 400 KB a row: two rows per 1 MiB chunk
    writeNpy(path, Float32Array.from({ length: 5 * row }, (_, i) => i % 1000), [5, row]);
    const a = openNpy(path);
    const out = new Float32Array(5 * row);
    const before = reads.count;
    a.readRows([0, 1, 2, 3, 4], out);
    expect(reads.count - before).toBe(3);
    expect(out[4 * row + 123]).toBe((4 * row + 123) % 1000);
    a.close();
  });

  it('refuses big-endian, unsupported and truncated files, naming them', () => {
    const be = tmpFile();
    writeNpy(be, new Float32Array(4), [4], { descr: '>f4' });
    expect(() => openNpy(be)).toThrow(new RegExp(`${be}: dtype '>f4' is big-endian.*astype\\('<f4'\\)`));
    const c8 = tmpFile();
    writeNpy(c8, new Float32Array(4), [4], { descr: '<c8' });
    expect(() => openNpy(c8)).toThrow(/'<c8' is not supported.*astype\(np\.float32\)/);
    const cut = tmpFile();
    writeNpy(cut, new Float32Array(12), [3, 4]);
    truncateSync(cut, statSync(cut).size - 8);
    expect(() => openNpy(cut)).toThrow(new RegExp(`${cut}: truncated: the header promises shape \\(3, 4\\) of '<f4' \\(48 bytes of data\\) but the file holds 40`));
    truncateSync(cut, 30);
    expect(() => openNpy(cut)).toThrow(/truncated: the file ends inside its \.npy header/);
    const text = tmpFile();
    writeFileSync(text, 'x,y\n1,2\n');
    expect(() => openNpy(text)).toThrow(/not a NumPy \.npy file.*np\.save/);
    writeFileSync(text, 'PK\x03\x04 zip zip zip');
    expect(() => openNpy(text)).toThrow(/\.npz archive/);
    const scalar = tmpFile();
    writeNpy(scalar, new Float32Array([1]), []);
    expect(() => openNpy(scalar)).toThrow(/0-d array/);
    expect(() => openNpy(join(tmp, 'nope.npy'))).toThrow(/Cannot open .*nope\.npy/);
  });
});

/** A fresh folder with the given files: name → [data, shape]. */
function folder(files: Record<string, [Parameters<typeof writeNpy>[1], number[]]>): string {
  const dir = mkdtempSync(join(tmp, 'ds-'));
  for (const [name, [data, shape]] of Object.entries(files)) {
    mkdirSync(dirname(join(dir, name)), { recursive: true });
    writeNpy(join(dir, name), data, shape);
  }
  return dir;
}
const ids = (n: number, width = 1) => Float32Array.from({ length: n * width }, (_, i) => Math.floor(i / width));
const labels = (n: number, mod: number) => Int32Array.from({ length: n }, (_, i) => i % mod);
const oneInOneOut: NpyFolderWants = {
  inputs: [{ name: 'pixels', shape: [4], dtype: 'float32' }],
  targets: [{ name: 'probs', shape: [], dtype: 'float32' }],
};

describe('openNpyFolder', () => {
  it('reads x.npy/y.npy for a one-input one-output model under the layer names', () => {
    const dir = folder({ 'x.npy': [ids(10, 4), [10, 4]], 'y.npy': [labels(10, 3), [10, 1]] });
    const ds = openNpyFolder(dir, oneInOneOut, { seed: 1 });
    expect(ds.describe).toBe(`NumPy folder ${dir} (train 10, no validation)`);
    expect(ds.arrays).toEqual([{ name: 'pixels', shape: [4], dtype: 'float32' }, { name: 'probs', shape: [1], dtype: 'int32' }]);
    expect([ds.train.size, ds.validation.size]).toEqual([10, 0]);
    expect([...ds.train.gather(['probs', 'pixels'], [5, 1])]).toEqual([2, 5, 5, 5, 5, 1, 1, 1, 1, 1]);
    expect(() => ds.train.gather(['x'], [0])).toThrow(/no array named 'x'.*'pixels', 'probs'/);
    expect(() => ds.train.gather(['pixels'], [10])).toThrow(/sample index 10 is outside 0\.\.9/);
    expect(ds.labelRange('probs')).toEqual({ min: 0, max: 2 });
    ds.close();
  });

  it('reads one <layer>.npy per layer, with / written as __', () => {
    const wants: NpyFolderWants = {
      inputs: [{ name: 'enc/tokens', shape: [3], dtype: 'int32' }, { name: 'side', shape: [2], dtype: 'float32' }],
      targets: [{ name: 'head/out', shape: [1], dtype: 'float32' }],
    };
    const dir = folder({ 'enc__tokens.npy': [labels(12, 50), [4, 3]], 'side.npy': [ids(4, 2), [4, 2]], 'head__out.npy': [new Float32Array(4).fill(0.5), [4]] });
    const ds = openNpyFolder(dir, wants, { seed: 1 });
    expect([...ds.train.gather(['enc/tokens', 'side', 'head/out'], [3])]).toEqual([9, 10, 11, 3, 3, 0.5]);
    ds.close();
    rmSync(join(dir, 'side.npy'));
    expect(() => openNpyFolder(dir, wants, { seed: 1 })).toThrow(
      /no side\.npy for model input 'side'\. Expected enc__tokens\.npy, side\.npy, head__out\.npy .*'\/' in layer names written as '__'.*found enc__tokens\.npy, head__out\.npy/);
    const floats = folder({ 'enc__tokens.npy': [ids(4, 3), [4, 3]], 'side.npy': [ids(4, 2), [4, 2]], 'head__out.npy': [ids(4), [4]] });
    expect(() => openNpyFolder(floats, wants, { seed: 1 })).toThrow(/enc__tokens\.npy: dtype 'float32', but model input 'enc\/tokens' takes integer ids.*astype\(np\.int32\)/);
  });

  it('names what is missing, mismatched or empty', () => {
    const noY = folder({ 'x.npy': [ids(10, 4), [10, 4]], 'z.npy': [ids(1), [1]] });
    expect(() => openNpyFolder(noY, oneInOneOut, { seed: 1 })).toThrow(/no y\.npy or probs\.npy for model target 'probs'\. Expected x\.npy and y\.npy; found x\.npy, z\.npy/);
    const counts = folder({ 'x.npy': [ids(10, 4), [10, 4]], 'y.npy': [labels(9, 2), [9]] });
    expect(() => openNpyFolder(counts, oneInOneOut, { seed: 1 })).toThrow(/different numbers of samples \(.*x\.npy: 10, .*y\.npy: 9\)/);
    const shape = folder({ 'x.npy': [ids(10, 4), [10, 2, 2]], 'y.npy': [labels(10, 2), [10]] });
    expect(() => openNpyFolder(shape, oneInOneOut, { seed: 1 })).toThrow(
      /x\.npy: each sample has shape \(2, 2\) \(file shape \(10, 2, 2\)\), but model input 'pixels' expects \(4,\)\. .*x\.reshape\(len\(x\), 4\)/);
    const wrong = folder({ 'x.npy': [ids(10, 3), [10, 3]], 'y.npy': [labels(10, 2), [10]] });
    expect(() => openNpyFolder(wrong, oneInOneOut, { seed: 1 })).toThrow(/expects \(4,\)\. Save an array of shape \(samples, 4\)/);
    const empty = folder({ 'x.npy': [new Float32Array(0), [0, 4]], 'y.npy': [new Int32Array(0), [0]] });
    expect(() => openNpyFolder(empty, oneInOneOut, { seed: 1 })).toThrow(/hold 0 samples/);
    const ok = folder({ 'x.npy': [ids(10, 4), [10, 4]], 'y.npy': [labels(10, 2), [10]] });
    const checkTarget = (name: string, dtype: string, shape: number[]) => (dtype === 'int32' ? `class ids for '${name}' ${shape.length}` : null);
    expect(() => openNpyFolder(ok, { ...oneInOneOut, checkTarget }, { seed: 1 })).toThrow(/y\.npy \(model target 'probs', shape \(10,\), dtype 'int32'\): class ids for 'probs' 0/);
    expect(() => openNpyFolder(join(tmp, 'absent'), oneInOneOut, { seed: 1 })).toThrow(/absent does not exist/);
  });

  it('refuses a NaN or infinite value with the file and sample: a small array when opened, any array at the read that meets it', () => {
    const x = ids(10, 4);
    x[4 * 6 + 2] = NaN;
    const nan = folder({ 'x.npy': [x, [10, 4]], 'y.npy': [labels(10, 2), [10]] });
    expect(() => openNpyFolder(nan, oneInOneOut, { seed: 1 })).toThrow(new RegExp(`${nan}/x\\.npy: sample 6 \\(row 6 of the array\\), value 2 of 4 is NaN; every value must be a finite number.*np\\.isnan`));
    const inVal = folder({ 'x.npy': [ids(10, 4), [10, 4]], 'y.npy': [labels(10, 2), [10]], 'val/x.npy': [ids(3, 4), [3, 4]], 'val/y.npy': [Float64Array.from([0, 1e300, 1]), [3]] });
    expect(() => openNpyFolder(inVal, oneInOneOut, { seed: 1 })).toThrow(/val\/y\.npy: sample 1 \(row 1 of the array\), value 0 of 1 is Infinity/);
    // The read itself refuses it (what a step does with an array too big to scan at the start, or one changed under the run).
    const file = tmpFile();
    writeNpy(file, Float32Array.from([1, 2, 3, -Infinity]), [2, 2]);
    const a = openNpy(file);
    const out = new Float32Array(4);
    a.readRows([0], out);
    expect([...out.subarray(0, 2)]).toEqual([1, 2]);
    expect(() => a.readRows([0, 1], out)).toThrow(/sample 1 \(row 1 of the array\), value 1 of 2 is -Infinity/);
    a.close();
  });

  it('takes validation from val/ and checks it like the training files', () => {
    const dir = folder({
      'x.npy': [ids(10, 4), [10, 4]], 'y.npy': [labels(10, 3), [10]],
      'val/x.npy': [ids(4, 4).map((v) => v + 100), [4, 4]], 'val/y.npy': [Int32Array.from([0, 1, 7, 2]), [4]],
    });
    const ds = openNpyFolder(dir, oneInOneOut, { seed: 3, validationSplit: 0.5 });
    expect(ds.describe).toBe(`NumPy folder ${dir} (train 10, validation 4 from val/)`);
    expect([...ds.validation.gather(['pixels'], [3])]).toEqual([103, 103, 103, 103]);
    expect(ds.labelRange('probs')).toEqual({ min: 0, max: 7 });
    ds.close();
    writeNpy(join(dir, 'val', 'x.npy'), ids(4, 5), [4, 5]);
    expect(() => openNpyFolder(dir, oneInOneOut, { seed: 3 })).toThrow(/val\/x\.npy: each sample has shape \(5,\)/);
    rmSync(join(dir, 'val', 'y.npy'));
    writeNpy(join(dir, 'val', 'x.npy'), ids(4, 4), [4, 4]);
    expect(() => openNpyFolder(dir, oneInOneOut, { seed: 3 })).toThrow(/NumPy folder .*val: no y\.npy or probs\.npy.*found x\.npy/);
  });

  it('holds out the last rows as model.fit(validationSplit) does, or a seeded, disjoint fraction when asked', () => {
    const dir = folder({ 'x.npy': [ids(20, 4), [20, 4]], 'y.npy': [labels(20, 5), [20]] });
    const rowsOf = (seed: number, validationHoldOut: 'last' | 'seededRandom' = 'seededRandom') => {
      const ds = openNpyFolder(dir, oneInOneOut, { seed, validationSplit: 0.25, validationHoldOut });
      // x row i holds the value i four times: one value a row names the file row a split index reads.
      const fileRows = (split: DataSplit) => [...split.gather(['pixels'], [...Array(split.size).keys()])].filter((_, i) => i % 4 === 0);
      const result = { describe: ds.describe, train: fileRows(ds.train), validation: fileRows(ds.validation) };
      ds.close();
      return result;
    };
    const a = rowsOf(7);
    expect(a.describe).toBe(`NumPy folder ${dir} (train 15, validation 5 held out by seed 7)`);
    expect(a.validation).toHaveLength(5);
    expect(new Set([...a.train, ...a.validation]).size).toBe(20);
    expect(rowsOf(7)).toEqual(a);
    expect(rowsOf(8).validation).not.toEqual(a.validation);
    // model.fit keeps the first floor(20 × 0.75) = 15 rows for training and validates on the last 5.
    const last = rowsOf(7, 'last');
    expect(last.describe).toBe(`NumPy folder ${dir} (train 15, validation the last 5)`);
    expect(last.train).toEqual([...Array(15).keys()]);
    expect(last.validation).toEqual([15, 16, 17, 18, 19]);
    expect(() => openNpyFolder(dir, oneInOneOut, { seed: 1, validationSplit: 1.5 })).toThrow(/validationSplit 1\.5 must be a fraction/);
  });

  it('scans label ranges in bounded chunks', () => {
    const y = labels(70_000, 10);
    y[69_999] = 42;
    const dir = folder({ 'x.npy': [ids(70_000, 4), [70_000, 4]], 'y.npy': [y, [70_000]] });
    const ds = openNpyFolder(dir, oneInOneOut, { seed: 1 });
    expect(ds.labelRange('probs')).toEqual({ min: 0, max: 42 });
    expect(() => ds.labelRange('nope')).toThrow(/no array named 'nope'/);
    ds.close();
  });
});

describe('syntheticDataset', () => {
  const wants = {
    inputs: [{ name: 'tokens', shape: [3], dtype: 'int32', range: [0, 49] as [number, number] }, { name: 'img', shape: [2, 2], dtype: 'float32' }],
    targets: [{ name: 'cls', shape: [], dtype: 'float32', range: [0, 9] as [number, number] }, { name: 'reg', shape: [1], dtype: 'float32' }],
  };
  const names = ['tokens', 'img', 'cls', 'reg'];

  it('generates each sample from (seed, split, index) alone', () => {
    const ds = syntheticDataset(wants, { seed: 5 });
    expect([ds.train.size, ds.validation.size, ds.describe]).toEqual([1024, 256, 'synthetic data (train 1024, validation 256, seed 5)']);
    expect(ds.arrays.map((a) => a.dtype)).toEqual(['int32', 'float32', 'int32', 'float32']);
    const both = ds.train.gather(names, [700, 3]);
    expect(both).toHaveLength(2 * 9);
    expect([...both.subarray(0, 9)]).toEqual([...ds.train.gather(names, [700])]);
    expect([...both.subarray(9)]).toEqual([...syntheticDataset(wants, { seed: 5 }).train.gather(names, [3])]);
    expect([...syntheticDataset(wants, { seed: 6 }).train.gather(names, [3])]).not.toEqual([...both.subarray(9)]);
    expect([...ds.validation.gather(names, [3])]).not.toEqual([...both.subarray(9)]);
    const many = ds.train.gather(names, [...Array(1024).keys()]);
    for (let r = 0; r < 1024; r++) {
      const row = many.subarray(r * 9, r * 9 + 9);
      for (const t of row.subarray(0, 3)) expect(Number.isInteger(t) && t >= 0 && t <= 49).toBe(true);
      for (const v of [...row.subarray(3, 7), row[8]]) expect(v >= 0 && v < 1).toBe(true);
      expect(Number.isInteger(row[7]) && row[7] >= 0 && row[7] <= 9).toBe(true);
    }
    expect(() => syntheticDataset({ inputs: [{ name: 'ids', shape: [3], dtype: 'int32' }], targets: [] }, { seed: 1 })).toThrow(/'ids' takes int32 ids.*range/);
    expect(syntheticDataset(wants, { seed: 1, samples: 10, validation: 0 }).validation.size).toBe(0);
  });
});
