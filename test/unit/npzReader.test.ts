import { execFileSync } from 'node:child_process';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import type { ModelArrays } from '../../engine/data/modelArrays.js';
import { openNpz } from '../../engine/wire/data/npz.js';
import { readZipDirectory } from '../../engine/wire/data/zipDirectory.js';

/** Archives written by NumPy itself (np.savez, np.savez_compressed), as users make them. */
const python = (() => {
  for (const bin of ['/usr/bin/python3', 'python3']) {
    try {
      execFileSync(bin, ['-c', 'import numpy'], { stdio: 'ignore' });
      return bin;
    } catch { /* try the next */ }
  }
  return null;
})();
const SKIP = python ? '' : ' (SKIPPED: python3 with numpy is not installed here)';
if (!python) console.warn('npzReader.test: python3 with numpy is not installed; the .npz tests are skipped.');

const root = mkdtempSync(join(tmpdir(), 'shoal-npz-'));
afterAll(() => rmSync(root, { recursive: true, force: true }));
function numpy(script: string): void {
  writeFileSync(join(root, 'make.py'), `import numpy as np\nimport os\nos.chdir(${JSON.stringify(root)})\n${script}\n`);
  execFileSync(python!, [join(root, 'make.py')]);
}
const model = (shape: number[], classes: number): ModelArrays => ({
  inputs: [{ name: 'in', shape, dtype: 'float32' }],
  targets: [{ name: 'out', shape: [], dtype: 'int32', range: [0, classes - 1] }],
});
const desc = (file: string, extra = {}) => ({ format: 'npz' as const, source: join(root, file), ...extra });

describe.skipIf(!python)(`.npz reader on NumPy's own archives${SKIP}`, () => {
  it('reads np.savez (stored, read in place) and np.savez_compressed (inflated once) row by row', () => {
    numpy(`x = np.arange(30, dtype=np.float64).reshape(10, 3) / 4
y = (np.arange(10) % 3).astype(np.int64)
np.savez('plain.npz', x=x, y=y)
np.savez_compressed('packed.npz', x=x, y=y)`);
    const stored = readZipDirectory(join(root, 'plain.npz'));
    expect(stored.map((m) => [m.name, m.method])).toEqual([['x.npy', 0], ['y.npy', 0]]);
    expect(readZipDirectory(join(root, 'packed.npz')).map((m) => m.method)).toEqual([8, 8]);
    for (const file of ['plain.npz', 'packed.npz']) {
      const data = openNpz(join(root, file), desc(file), model([3], 3), 1);
      expect(data.train.size).toBe(10);
      expect([...data.train.gather(['in', 'out'], [7, 2])]).toEqual([21 / 4, 22 / 4, 23 / 4, 1, 6 / 4, 7 / 4, 8 / 4, 2]);
      expect(data.describe).toMatch(/train 10, no validation; in ← x, out ← y/);
      data.close();
    }
  });

  it("takes Keras's x_train/y_train/x_test/y_test, named arrays per layer, and a seeded split", () => {
    numpy(`np.savez('keras.npz', x_train=np.ones((8, 2, 2), np.uint8), y_train=np.zeros(8, np.uint8), x_test=np.full((3, 2, 2), 2, np.uint8), y_test=np.ones(3, np.uint8))
np.savez('named.npz', a=np.zeros((6, 2), np.float32), b=np.ones((6, 1), np.float32), lab=np.arange(6) % 2)`);
    const keras = openNpz(join(root, 'keras.npz'), desc('keras.npz'), model([2, 2], 2), 1);
    expect([keras.train.size, keras.validation.size]).toEqual([8, 3]);
    expect([...keras.validation.gather(['in', 'out'], [0])]).toEqual([2, 2, 2, 2, 1]);
    keras.close();
    const split = openNpz(join(root, 'keras.npz'), desc('keras.npz', { validationSplit: 0.25 }), model([2, 2], 2), 1);
    expect([split.train.size, split.validation.size]).toEqual([6, 2]);
    split.close();
    const two: ModelArrays = { inputs: [{ name: 'left', shape: [2], dtype: 'float32' }, { name: 'right', shape: [1], dtype: 'float32' }], targets: [{ name: 'cls', shape: [], dtype: 'int32', range: [0, 1] }] };
    const named = openNpz(join(root, 'named.npz'), desc('named.npz', { inputs: [{ layer: 'left', array: 'a' }, { layer: 'right', array: 'b' }], outputs: [{ array: 'lab' }] }), two, 1);
    expect([...named.train.gather(['left', 'right', 'cls'], [3])]).toEqual([0, 0, 1, 1]);
    named.close();
  });

  it('names the archive, the member and what the model expects', () => {
    numpy(`np.savez('bad.npz', x=np.zeros((4, 5), np.float32), y=np.array([0, 1, 2, 7]))
np.savez('other.npz', features=np.zeros((4, 3)), labels=np.zeros(4))`);
    expect(() => openNpz(join(root, 'bad.npz'), desc('bad.npz'), model([3], 3), 1)).toThrow(/bad\.npz\[x\.npy\]: each sample has shape \(5,\).*expects \(3,\)/);
    expect(() => openNpz(join(root, 'bad.npz'), desc('bad.npz'), model([5], 3), 1)).toThrow(/bad\.npz\[y\.npy\] ranges over \[0, 7\], but model layer 'out' accepts \[0, 2\]/);
    expect(() => openNpz(join(root, 'other.npz'), desc('other.npz'), model([3], 3), 1)).toThrow(/no array for model input 'in': expected 'x' or 'x_train' or 'in'; the archive holds 'features', 'labels'/);
    writeFileSync(join(root, 'junk.npz'), 'not a zip at all');
    expect(() => openNpz(join(root, 'junk.npz'), desc('junk.npz'), model([3], 3), 1)).toThrow(/not a readable \.npz \(zip\) archive/);
  });
});
