import { describe, expect, it } from 'vitest';
import { ChartSeries } from '../../renderer/src/charts/chartSeries.js';
import { decimate, lowerBound } from '../../renderer/src/charts/downsample.js';
import type { Decimated } from '../../renderer/src/charts/downsample.js';
import { MinMaxIndex } from '../../renderer/src/charts/minMaxIndex.js';
import { smoothEma } from '../../renderer/src/charts/smoothing.js';

/**
 * The decimation as one pass over every point of every column (what the studio did before it had an
 * index): the indexed decimation must keep exactly the same points, ties and gaps included.
 */
function scanDecimate(x: number[], ys: ArrayLike<number>[], columns: number, lo: number, hi: number, positiveOnly: boolean): Decimated {
  const floor = positiveOnly ? 0 : -Infinity;
  const out: Decimated = { x: [], ys: ys.map(() => []) };
  const push = (i: number) => {
    out.x.push(x[i]);
    ys.forEach((y, s) => out.ys[s].push(y[i] > floor && y[i] < Infinity ? y[i] : null));
  };
  const cols = Math.max(1, Math.floor(columns));
  if (hi - lo <= cols * (2 + 2 * ys.length)) {
    for (let i = lo; i < hi; i++) push(i);
    return out;
  }
  const x0 = x[lo];
  const width = (x[hi - 1] - x0) / cols || 1;
  for (let i = lo; i < hi; ) {
    const column = Math.min(cols - 1, Math.floor((x[i] - x0) / width));
    const edge = column === cols - 1 ? Infinity : x0 + (column + 1) * width;
    let j = i + 1;
    while (j < hi && x[j] < edge) j++;
    const picked = [i, j - 1];
    for (const y of ys) {
      let [low, high, lowValue, highValue] = [-1, -1, Infinity, -Infinity];
      for (let k = i; k < j; k++) {
        if (y[k] < lowValue && y[k] > floor) [low, lowValue] = [k, y[k]];
        if (y[k] > highValue && y[k] < Infinity && y[k] > floor) [high, highValue] = [k, y[k]];
      }
      if (low >= 0) picked.push(low, high);
    }
    [...new Set(picked)].sort((a, b) => a - b).forEach(push);
    i = j;
  }
  return out;
}

/** Steps with gaps (x not evenly spaced), values with ties, NaN, ±Infinity, zeros and negatives (seeded). */
function awkwardSeries(n: number, seed: number): { x: number[]; y: number[] } {
  let state = seed;
  const random = () => ((state = (state * 1_103_515_245 + 12_345) % 2 ** 31) / 2 ** 31);
  const x: number[] = [];
  const y: number[] = [];
  for (let i = 0, step = 1; i < n; i++, step += random() < 0.05 ? 40 : 1) {
    x.push(step);
    const r = random();
    y.push(r < 0.01 ? Number.NaN : r < 0.015 ? Infinity : r < 0.02 ? -Infinity : r < 0.1 ? 0 : r < 0.3 ? Math.round(random() * 4) - 1 : Math.sin(i / 30) + random());
  }
  return { x, y };
}

describe('indexed min/max decimation', () => {
  it('keeps exactly the points a full scan keeps: whole series, windows, log axes, several series', () => {
    const { x, y } = awkwardSeries(30_000, 5);
    const smooth = smoothEma(y, 0.8);
    for (const [lo, hi] of [[0, x.length], [1_234, 9_876], [29_000, 30_000], [0, 300]]) {
      for (const positiveOnly of [false, true]) {
        for (const columns of [1, 97, 800]) {
          expect(decimate(x, [y, smooth], columns, lo, hi, positiveOnly)).toEqual(scanDecimate(x, [y, smooth], columns, lo, hi, positiveOnly));
        }
      }
    }
  });

  it('an index extended point by point answers as one built at once, for every range', () => {
    const { y } = awkwardSeries(777, 9);
    const live = new MinMaxIndex();
    const whole = new MinMaxIndex();
    whole.extend(y);
    const a: [number, number] = [0, 0];
    const b: [number, number] = [0, 0];
    const differing: string[] = [];
    let ranges = 0;
    for (let n = 1; n <= y.length; n += n < 70 ? 1 : 53) {
      live.extend(y, n);
      for (let lo = 0; lo < n; lo += 1 + (lo % 7)) {
        for (let hi = lo + 1; hi <= n; hi += 1 + (hi % 11)) {
          for (const positiveOnly of [false, true]) {
            live.range(lo, hi, positiveOnly, a);
            whole.range(lo, hi, positiveOnly, b);
            ranges++;
            if (a[0] !== b[0] || a[1] !== b[1]) differing.push(`${n} points, ${lo}..${hi}${positiveOnly ? ' (log)' : ''}: ${a} vs ${b}`);
          }
        }
      }
    }
    expect(ranges).toBeGreaterThan(10_000);
    expect(differing.slice(0, 5)).toEqual([]);
    // And the answers are the scan's: the first lowest and first highest finite point.
    live.range(100, 700, false, a);
    const slice = y.slice(100, 700).map((v) => (Number.isFinite(v) ? v : Number.NaN));
    const finite = slice.filter((v) => !Number.isNaN(v));
    expect(a).toEqual([100 + slice.indexOf(Math.min(...finite)), 100 + slice.indexOf(Math.max(...finite))]);
  });

  it('says clearly when a series is not indexed as far as the range goes', () => {
    const index = new MinMaxIndex();
    index.extend([1, 2, 3, 4], 2);
    expect(() => decimate(Array.from({ length: 400 }, (_, i) => i), [index], 10, 0, 400)).toThrow(/indexed up to point 2 .* extend its MinMaxIndex/);
  });

  it('lowerBound searches within the bounds it is given', () => {
    expect(lowerBound([1, 3, 5, 7, 9], 5, 3, 5)).toBe(3);
    expect(lowerBound([1, 3, 5, 7, 9], 100, 1, 3)).toBe(3);
  });
});

describe('a live chart series', () => {
  const live = awkwardSeries(20_000, 13);

  it('growing in place decimates as the same series given whole, smoothed or raw, zoomed or not', () => {
    const x: number[] = [];
    const y: number[] = [];
    const series = new ChartSeries();
    for (let n = 0; n < live.x.length; ) {
      const next = Math.min(live.x.length, n + (n < 10_000 ? 4_000 : 1));
      for (; n < next; n++) {
        x.push(live.x[n]);
        y.push(live.y[n]);
      }
      expect(series.sync(x, y, 0.9)).toBe(true);
      if (n % 997 !== 0 && n < live.x.length) continue;
      const fresh = new ChartSeries();
      fresh.sync(live.x.slice(0, n), live.y.slice(0, n), 0.9);
      for (const zoom of [null, [x[Math.floor(n / 3)], x[Math.floor(n / 2)]] as [number, number]]) {
        expect(series.decimate(640, zoom, false)).toEqual(fresh.decimate(640, zoom, false));
      }
    }
    // Nothing new: nothing to draw again.
    expect(series.sync(x, y, 0.9)).toBe(false);
    // A new weight smooths again; no weight drops the smoothed series.
    expect(series.sync(x, y, 0.5)).toBe(true);
    expect(series.decimate(640, null, true).ys).toHaveLength(2);
    expect(series.sync(x, y, null)).toBe(true);
    expect(series.decimate(640, null, true).ys).toHaveLength(1);
  });

  it('starts again from new arrays, and from a series that stopped being constant', () => {
    const series = new ChartSeries();
    const x = Array.from({ length: 5_000 }, (_, i) => i);
    const y = x.map(() => 1);
    series.sync(x, y, 0.9);
    x.push(5_000);
    y.push(9);
    series.sync(x, y, 0.9);
    const fresh = new ChartSeries();
    fresh.sync([...x], [...y], 0.9);
    expect(series.decimate(300, null, false)).toEqual(fresh.decimate(300, null, false));
    const other = awkwardSeries(3_000, 1);
    expect(series.sync(other.x, other.y, 0.9)).toBe(true);
    expect(series.length).toBe(3_000);
  });
});
