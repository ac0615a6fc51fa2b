/** The first index whose x is at least `value` (x ascending); x.length when none is. */
export function lowerBound(x: ArrayLike<number>, value: number): number {
  let lo = 0;
  let hi = x.length;
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
 */
export function decimate(x: ArrayLike<number>, ys: ArrayLike<number>[], columns: number, lo = 0, hi = x.length, positiveOnly = false): Decimated {
  // Values at or below `floor` (and NaN, which fails every comparison) are gaps.
  const floor = positiveOnly ? 0 : -Infinity;
  const out: Decimated = { x: [], ys: ys.map(() => []) };
  const push = (i: number) => {
    out.x.push(x[i]);
    for (let s = 0; s < ys.length; s++) {
      const v = ys[s][i];
      out.ys[s].push(v > floor && v < Infinity ? v : null);
    }
  };
  const start = Math.max(0, lo);
  const end = Math.min(x.length, hi);
  const cols = Math.max(1, Math.floor(columns));
  if (end - start <= cols * (2 + 2 * ys.length)) {
    for (let i = start; i < end; i++) push(i);
    return out;
  }
  const x0 = x[start];
  const width = (x[end - 1] - x0) / cols || 1;
  const picked: number[] = [];
  let i = start;
  while (i < end) {
    // This column runs from point i to the last point left of its right edge (the last column to the end).
    const column = Math.min(cols - 1, Math.floor((x[i] - x0) / width));
    const edge = column === cols - 1 ? Infinity : x0 + (column + 1) * width;
    let j = i + 1;
    while (j < end && x[j] < edge) j++;
    picked.length = 0;
    picked.push(i, j - 1);
    // One tight pass per series (no allocation, no calls): the lowest and highest kept value.
    for (let s = 0; s < ys.length; s++) {
      const y = ys[s];
      let low = -1;
      let high = -1;
      let lowValue = Infinity;
      let highValue = -Infinity;
      for (let k = i; k < j; k++) {
        const v = y[k];
        if (v < lowValue && v > floor) {
          lowValue = v;
          low = k;
        }
        if (v > highValue && v < Infinity && v > floor) {
          highValue = v;
          high = k;
        }
      }
      if (low >= 0) picked.push(low, high);
    }
    picked.sort((a, b) => a - b);
    for (let k = 0; k < picked.length; k++) if (k === 0 || picked[k] !== picked[k - 1]) push(picked[k]);
    i = j;
  }
  return out;
}
