import { MinMaxIndex } from './minMaxIndex';

/** The first index in from..to−1 whose x is at least `value` (x ascending); `to` when none is. */
export function lowerBound(x: ArrayLike<number>, value: number, from = 0, to = x.length): number {
  let lo = from;
  let hi = to;
  while (lo < hi) {
    const mid = (lo + hi) >>> 1;
    if (x[mid] < value) lo = mid + 1;
    else hi = mid;
  }
  return lo;
}

/** What uPlot draws: x and one array per series, null where a value is missing (a gap). */
export interface Decimated {
  x: number[];
  ys: (number | null)[][];
}

/**
 * Min/max decimation of several series that share x (ascending), over the points lo..hi−1: the range
 * is cut into `columns` runs of equal x width (one per pixel column) and each run keeps its first and
 * last point and, for every series, its lowest and highest, in x order. A line through what is kept
 * covers the same pixels as one through every point (spikes included), so uPlot gets at most
 * 2 + 2·series points per pixel however long the series grow. Non-finite values become null, as do
 * values ≤ 0 when `positiveOnly` (a log axis). Ranges already small enough are copied whole.
 *
 * Each series comes with its MinMaxIndex (a plain array is indexed here): a column's bounds are found
 * by binary search on x and its extremes from the index, so the cost is O(columns · log n) rather than
 * a pass over every point, and a live chart that appends points decimates again without reading them all.
 */
export function decimate(x: ArrayLike<number>, ys: Array<ArrayLike<number> | MinMaxIndex>, columns: number, lo = 0, hi = x.length, positiveOnly = false): Decimated {
  const start = Math.max(0, lo);
  const end = Math.min(x.length, hi);
  const values = ys.map((y) => (y instanceof MinMaxIndex ? y.values : y));
  // Values at or below `floor` (and NaN, which fails every comparison) are gaps.
  const floor = positiveOnly ? 0 : -Infinity;
  const out: Decimated = { x: [], ys: ys.map(() => []) };
  const push = (i: number) => {
    out.x.push(x[i]);
    for (let s = 0; s < values.length; s++) {
      const v = values[s][i];
      out.ys[s].push(v > floor && v < Infinity ? v : null);
    }
  };
  const cols = Math.max(1, Math.floor(columns));
  if (end - start <= cols * (2 + 2 * ys.length)) {
    for (let i = start; i < end; i++) push(i);
    return out;
  }
  const indexes = ys.map((y) => (y instanceof MinMaxIndex ? y : indexOf(y, end)));
  const short = indexes.find((index) => index.length < end);
  if (short) throw new Error(`decimate: a series is indexed up to point ${short.length} but the range ends at ${end}: extend its MinMaxIndex first.`);
  const x0 = x[start];
  const width = (x[end - 1] - x0) / cols || 1;
  const picked: number[] = [];
  const extremes: [number, number] = [-1, -1];
  let i = start;
  while (i < end) {
    // This column runs from point i to the last point left of its right edge (the last column to the end).
    const column = Math.min(cols - 1, Math.floor((x[i] - x0) / width));
    const j = column === cols - 1 ? end : lowerBound(x, x0 + (column + 1) * width, i + 1, end);
    picked.length = 0;
    picked.push(i, j - 1);
    for (let s = 0; s < indexes.length; s++) {
      indexes[s].range(i, j, positiveOnly, extremes);
      if (extremes[0] >= 0) picked.push(extremes[0], extremes[1]);
    }
    // At most 2 + 2·series indices: an insertion sort, then each kept once.
    for (let k = 1; k < picked.length; k++) {
      const p = picked[k];
      let m = k;
      for (; m > 0 && picked[m - 1] > p; m--) picked[m] = picked[m - 1];
      picked[m] = p;
    }
    for (let k = 0; k < picked.length; k++) if (k === 0 || picked[k] !== picked[k - 1]) push(picked[k]);
    i = j;
  }
  return out;
}

function indexOf(values: ArrayLike<number>, n: number): MinMaxIndex {
  const index = new MinMaxIndex();
  index.extend(values, n);
  return index;
}
