import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import type { ModelGraph } from '../../engine/model/graph.js';
import { dataRefFrom } from '../../engine/node/trainingOptions.js';
import { heldOutRows } from '../../engine/wire/data/heldOut.js';

const dir = mkdtempSync(join(tmpdir(), 'shoal-holdout-'));
afterAll(() => rmSync(dir, { recursive: true, force: true }));
const graph = { layers: [] } as unknown as ModelGraph;

describe('which rows a validation split holds out', () => {
  it('by default the last rows, as model.fit(validationSplit): training keeps floor(rows × (1 − F))', () => {
    // tfjs: splitAt = floor(10 × 0.75) = 7.
    const { trainRows, valRows } = heldOutRows('ten rows', 10, 0.25, 'last', 1);
    expect(Array.from(trainRows)).toEqual([0, 1, 2, 3, 4, 5, 6]);
    expect(Array.from(valRows)).toEqual([7, 8, 9]);
  });

  it('a seeded random fraction only when asked, the same for the same seed', () => {
    const a = heldOutRows('ten rows', 10, 0.3, 'seededRandom', 5);
    expect(Array.from(heldOutRows('ten rows', 10, 0.3, 'seededRandom', 5).valRows)).toEqual(Array.from(a.valRows));
    expect(new Set([...a.trainRows, ...a.valRows]).size).toBe(10);
  });

  it('--validation-holdout names its choices and needs --validation-split', () => {
    expect(dataRefFrom({ data: dir, 'validation-split': '0.2', 'validation-holdout': 'seeded-random' }, graph)).toEqual({ kind: 'npy', dir, validationSplit: 0.2, validationHoldOut: 'seededRandom' });
    expect(dataRefFrom({ data: dir, 'validation-split': '0.2' }, graph)).toEqual({ kind: 'npy', dir, validationSplit: 0.2 });
    expect(() => dataRefFrom({ data: dir, 'validation-split': '0.2', 'validation-holdout': 'first' }, graph)).toThrow(/--validation-holdout first: use last .* or seeded-random/);
    expect(() => dataRefFrom({ data: dir, 'validation-holdout': 'last' }, graph)).toThrow(/give --validation-split F too/);
  });
});
