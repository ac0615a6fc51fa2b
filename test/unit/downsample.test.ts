import { describe, expect, it } from 'vitest';
import { decimate, lowerBound } from '../../renderer/src/charts/downsample.js';
import { smoothEma } from '../../renderer/src/charts/smoothing.js';

const series = (n: number, f: (i: number) => number) => ({ x: Array.from({ length: n }, (_, i) => i), y: Array.from({ length: n }, (_, i) => f(i)) });

describe('min/max decimation for charts', () => {
  it('copies small ranges whole', () => {
    const { x, y } = series(100, (i) => i * 2);
    const d = decimate(x, [y], 50);
    expect(d.x).toEqual(x);
    expect(d.ys[0]).toEqual(y);
  });

  it('keeps at most four points per column of one series out of 100,000, in ascending x', () => {
    const { x, y } = series(100_000, (i) => Math.sin(i / 50) + (i % 997 === 0 ? 5 : 0));
    const d = decimate(x, [y], 800);
    expect(d.x.length).toBe(d.ys[0].length);
    expect(d.x.length).toBeLessThanOrEqual(800 * 4);
    expect(d.x.length).toBeGreaterThan(800);
    for (let i = 1; i < d.x.length; i++) expect(d.x[i]).toBeGreaterThan(d.x[i - 1]);
    // Every kept point is a real point of the series.
    for (let i = 0; i < d.x.length; i += 97) expect(d.ys[0][i]).toBe(y[d.x[i]]);
  });

  it('keeps the first and last points, the extremes and every spike of each series', () => {
    const { x, y } = series(50_000, (i) => (i === 12_345 ? 100 : i === 33_333 ? -100 : 1 / (1 + i)));
    const other = x.map((i) => (i === 40_000 ? 7 : 0));
    const d = decimate(x, [y, other], 300);
    expect(d.x[0]).toBe(0);
    expect(d.x.at(-1)).toBe(49_999);
    expect(Math.max(...(d.ys[0] as number[]))).toBe(100);
    expect(Math.min(...(d.ys[0] as number[]))).toBe(-100);
    expect(Math.max(...(d.ys[1] as number[]))).toBe(7);
    expect(d.x.length).toBeLessThanOrEqual(300 * 6);
  });

  it('decimates a window (a zoom) at full resolution inside it', () => {
    const { x, y } = series(100_000, (i) => i);
    const lo = lowerBound(x, 50_000);
    const hi = lowerBound(x, 50_400);
    const d = decimate(x, [y], 800, lo, hi);
    // 400 points in 800 columns: every one of them.
    expect(d.x).toEqual(x.slice(50_000, 50_400));
  });

  it('turns non-finite values (and non-positive ones on a log axis) into gaps', () => {
    const x = Array.from({ length: 10_000 }, (_, i) => i * i);
    const y = x.map((_, i) => (i % 10 === 0 ? Number.NaN : i));
    const d = decimate(x, [y], 100);
    expect(d.ys[0].every((v) => v === null || Number.isFinite(v))).toBe(true);
    expect(d.x.length).toBeLessThanOrEqual(400);
    expect(d.ys[0].at(-1)).toBe(9_999);
    expect(decimate([0, 1, 2], [[-1, 0, 3]], 10, 0, 3, true).ys[0]).toEqual([null, null, 3]);
  });

  it('finds bounds by binary search', () => {
    expect(lowerBound([1, 3, 5], 0)).toBe(0);
    expect(lowerBound([1, 3, 5], 3)).toBe(1);
    expect(lowerBound([1, 3, 5], 4)).toBe(2);
    expect(lowerBound([1, 3, 5], 9)).toBe(3);
  });
});

describe('TensorBoard smoothing', () => {
  it('is an EMA with debiasing: the first point is itself, later ones weigh the past', () => {
    const s = smoothEma([1, 2, 3], 0.5);
    expect(s).toBeInstanceOf(Float64Array);
    expect(s[0]).toBeCloseTo(1);
    // (0.25·1 + 0.5·2) / (1 − 0.25) = 1.6667; TensorBoard's classic smoothing gives the same.
    expect(s[1]).toBeCloseTo(5 / 3);
    expect(s[2]).toBeCloseTo((0.125 * 1 + 0.25 * 2 + 0.5 * 3) / (1 - 0.125));
  });

  it('leaves weight 0, constant series and non-finite points alone', () => {
    expect([...smoothEma([3, 1, 2], 0)]).toEqual([3, 1, 2]);
    expect([...smoothEma([2, 2, 2], 0.9)]).toEqual([2, 2, 2]);
    const s = smoothEma([1, NaN, 1, 3], 0.6);
    expect(s[1]).toBeNaN();
    expect(s[2]).toBeCloseTo(1);
    expect(s[3]).toBeGreaterThan(1);
    expect(s[3]).toBeLessThan(3);
  });

  it('at 0.999 over 100,000 noisy points follows the trend without the start pulled to zero', () => {
    const { y } = series(100_000, (i) => 2 + Math.sin(i) * 0.5);
    const s = smoothEma(y, 0.999);
    expect(s[0]).toBeCloseTo(y[0]);
    expect(Math.abs(s[99_999] - 2)).toBeLessThan(0.05);
  });
});
