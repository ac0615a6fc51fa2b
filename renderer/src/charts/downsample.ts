/**
 * Min/max decimation for line charts: the points are cut into `buckets` runs of equal x width (one per
 * pixel column) and each run keeps its first, lowest, highest and last point, in x order. A line drawn
 * through what is kept covers the same pixels as one through every point (spikes included), and uPlot
 * gets at most 4 points per pixel however long the series grows. Non-finite y values are dropped.
 * Series already small enough come back as they are (same arrays).
 */
export function downsampleMinMax(x: number[], y: number[], buckets: number): [number[], number[]] {
  const n = Math.min(x.length, y.length);
  const columns = Math.max(1, Math.floor(buckets));
  if (n <= columns * 4) return [x, y];
  const x0 = x[0];
  const width = (x[n - 1] - x0) / columns || 1;
  const outX: number[] = [];
  const outY: number[] = [];
  let i = 0;
  while (i < n) {
    const column = Math.min(columns - 1, Math.floor((x[i] - x0) / width));
    let first = -1;
    let last = -1;
    let lo = -1;
    let hi = -1;
    for (; i < n && Math.min(columns - 1, Math.floor((x[i] - x0) / width)) === column; i++) {
      const v = y[i];
      if (!Number.isFinite(v)) continue;
      if (first < 0) first = i;
      last = i;
      if (lo < 0 || v < y[lo]) lo = i;
      if (hi < 0 || v > y[hi]) hi = i;
    }
    if (first < 0) continue;
    // The kept indices in ascending order, each once.
    for (const k of [...new Set([first, lo, hi, last])].sort((a, b) => a - b)) {
      outX.push(x[k]);
      outY.push(y[k]);
    }
  }
  return [outX, outY];
}
