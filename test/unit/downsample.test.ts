import { describe, expect, it } from 'vitest';
import { downsampleMinMax } from '../../renderer/src/charts/downsample.js';

const series = (n: number, f: (i: number) => number) => ({ x: Array.from({ length: n }, (_, i) => i), y: Array.from({ length: n }, (_, i) => f(i)) });

describe('min/max downsampling for charts', () => {
  it('returns small series unchanged', () => {
    const { x, y } = series(100, (i) => i * 2);
    const [dx, dy] = downsampleMinMax(x, y, 50);
    expect(dx).toBe(x);
    expect(dy).toBe(y);
  });

  it('keeps at most four points per bucket out of 100,000, in ascending x', () => {
    const { x, y } = series(100_000, (i) => Math.sin(i / 50) + (i % 997 === 0 ? 5 : 0));
    const [dx, dy] = downsampleMinMax(x, y, 800);
    expect(dx.length).toBe(dy.length);
    expect(dx.length).toBeLessThanOrEqual(800 * 4);
    expect(dx.length).toBeGreaterThan(800);
    for (let i = 1; i < dx.length; i++) expect(dx[i]).toBeGreaterThan(dx[i - 1]);
    // Every kept point is a real point of the series.
    for (let i = 0; i < dx.length; i += 97) expect(dy[i]).toBe(y[dx[i]]);
  });

  it('keeps the first and last points, the extremes and every spike', () => {
    const { x, y } = series(50_000, (i) => (i === 12_345 ? 100 : i === 33_333 ? -100 : 1 / (1 + i)));
    const [dx, dy] = downsampleMinMax(x, y, 300);
    expect(dx[0]).toBe(0);
    expect(dx.at(-1)).toBe(49_999);
    expect(Math.max(...dy)).toBe(100);
    expect(Math.min(...dy)).toBe(-100);
    expect(dx).toContain(12_345);
    expect(dx).toContain(33_333);
  });

  it('drops non-finite values and handles uneven x spacing', () => {
    const x = Array.from({ length: 10_000 }, (_, i) => i * i);
    const y = x.map((_, i) => (i % 10 === 0 ? Number.NaN : i));
    const [dx, dy] = downsampleMinMax(x, y, 100);
    expect(dy.every(Number.isFinite)).toBe(true);
    expect(dx.length).toBeLessThanOrEqual(400);
    expect(dy.at(-1)).toBe(9_999);
  });
});
