import { describe, expect, it } from 'vitest';
import { EmaSmoother, smoothEma } from '../../renderer/src/charts/smoothing.js';

/** TensorBoard's classic smoothing written out plainly, as the reference (Math.pow, no running product). */
function reference(y: number[], w: number): number[] {
  if (w === 0 || y.every((v) => v === y[0])) return [...y];
  let last = 0;
  let n = 0;
  return y.map((v) => {
    if (!Number.isFinite(v)) return v;
    last = last * w + (1 - w) * v;
    n++;
    return w === 1 ? last : last / (1 - Math.pow(w, n));
  });
}

/** A noisy decaying loss with NaN and infinite points here and there (a seeded generator: the same every run). */
function noisyLoss(n: number, seed: number): number[] {
  let state = seed;
  const random = () => ((state = (state * 1_103_515_245 + 12_345) % 2 ** 31) / 2 ** 31);
  return Array.from({ length: n }, (_, i) => {
    const r = random();
    if (r < 0.002) return Number.NaN;
    if (r < 0.003) return Number.POSITIVE_INFINITY;
    return 2.3 * Math.exp(-i / 2_000) + 0.3 * (random() - 0.5);
  });
}

/** Where two smoothed series differ, to the bit (NaN equals NaN); at most a few. */
const bitDifferences = (a: Float64Array, b: Float64Array) => {
  const where: number[] = [];
  for (let i = 0; i < Math.max(a.length, b.length) && where.length < 5; i++) if (!Object.is(a[i], b[i])) where.push(i);
  return where;
};

/** Smooth `y` by extending the smoother in the given chunk sizes (cycled) until it has every point. */
function extendInChunks(y: number[], weight: number, chunks: number[]): Float64Array {
  const smoother = new EmaSmoother(weight);
  for (let n = 0, c = 0; n < y.length; c++) {
    n = Math.min(y.length, n + chunks[c % chunks.length]);
    smoother.extend(y, n);
  }
  return smoother.values.slice(0, smoother.length);
}

describe('incremental TensorBoard smoothing', () => {
  it('smoothing the whole series agrees with the plain formula', () => {
    const y = noisyLoss(5_000, 7);
    for (const w of [0, 0.3, 0.6, 0.9, 0.999, 1]) {
      const s = smoothEma(y, w);
      const r = reference(y, w);
      // Equal but for rounding (the reference takes powers; the smoother keeps a running product).
      const off = r.filter((v, i) => (Number.isFinite(v) ? Math.abs(s[i] - v) > 1e-9 * Math.max(1, Math.abs(v)) : !Object.is(s[i], v)));
      expect(off).toEqual([]);
    }
  });

  it('extended a point (or a few) at a time, equals smoothing the whole series to the last bit', () => {
    const y = noisyLoss(20_000, 11);
    for (const w of [0, 0.6, 0.95, 0.999]) {
      const whole = smoothEma(y, w);
      for (const chunks of [[1], [7, 1, 300], [4_999]]) {
        const extended = extendInChunks(y, w, chunks);
        expect(extended.length).toBe(y.length);
        expect(bitDifferences(extended, whole)).toEqual([]);
      }
    }
  });

  it('smooths only the new points on a live series, and says from where it wrote', () => {
    const y = noisyLoss(1_000, 3);
    const smoother = new EmaSmoother(0.6);
    expect(smoother.extend(y, 500)).toBe(0);
    const before = smoother.values.slice(0, 500);
    expect(smoother.extend(y, 501)).toBe(500);
    expect(bitDifferences(smoother.values.slice(0, 500), before)).toEqual([]);
    // Nothing new: nothing written.
    expect(smoother.extend(y, 501)).toBe(501);
    expect(smoother.length).toBe(501);
  });

  it('a series constant so far is copied; once it changes it is smoothed again from its start', () => {
    const y = [2, 2, 2, 2, 5, 1, 3];
    const smoother = new EmaSmoother(0.9);
    smoother.extend(y, 4);
    expect([...smoother.values.slice(0, 4)]).toEqual([2, 2, 2, 2]);
    // The fifth point breaks the constant run: every point is written again.
    expect(smoother.extend(y, 5)).toBe(0);
    smoother.extend(y, 7);
    expect(bitDifferences(smoother.values.slice(0, 7), smoothEma(y, 0.9))).toEqual([]);
    expect(smoother.values[4]).not.toBe(5);
  });
});
