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
  const keep = (v: number): number | null => (Number.isFinite(v) && (!positiveOnly || v > 0) ? v : null);
  const out: Decimated = { x: [], ys: ys.map(() => []) };
  const push = (i: number) => {
    out.x.push(x[i]);
    for (let s = 0; s < ys.length; s++) out.ys[s].push(keep(ys[s][i]));
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
    const column = Math.min(cols - 1, Math.floor((x[i] - x0) / width));
    const first = i;
    const lows = ys.map(() => -1);
    const highs = ys.map(() => -1);
    for (; i < end && Math.min(cols - 1, Math.floor((x[i] - x0) / width)) === column; i++) {
      for (let s = 0; s < ys.length; s++) {
        const v = keep(ys[s][i]);
        if (v === null) continue;
        if (lows[s] < 0 || v < ys[s][lows[s]]) lows[s] = i;
        if (highs[s] < 0 || v > ys[s][highs[s]]) highs[s] = i;
      }
    }
    picked.length = 0;
    picked.push(first, i - 1);
    for (let s = 0; s < ys.length; s++) if (lows[s] >= 0) picked.push(lows[s], highs[s]);
    picked.sort((a, b) => a - b);
    for (let k = 0; k < picked.length; k++) if (k === 0 || picked[k] !== picked[k - 1]) push(picked[k]);
  }
  return out;
}
