/** The smallest block indexed: 16 points (shorter runs are read point by point). */
const BASE = 4;

/**
 * Ranges up to this many points are read point by point: a tight pass over 256 numbers costs about as
 * much as walking the blocks, and needs no index. At 100,000 steps on a 1,300-pixel chart a column holds
 * about 77 points, so a whole-view decimation (and a smoothing weight that changes every frame) never
 * builds the index; it pays off for longer series or narrower charts.
 */
const LINEAR_MAX = 256;

/**
 * The lowest and highest point of any index range of a series in O(log n), for decimating a chart
 * per pixel column without reading every point (./downsample.ts). Level k (k ≥ 4) holds, for each
 * block of 2^k points starting at a multiple of 2^k, the index of its first lowest finite point, its
 * first highest finite point and its first lowest positive point (−1 where it has none). A range is
 * covered by at most 2·log2(n) such blocks and at most 30 single points at its ends, taken left to
 * right with strict comparisons so that ties keep the first point, as a scan would. The index is built
 * when a range longer than LINEAR_MAX first asks for it (shorter ones are scanned), and then kept up to
 * date as points are appended: one block per level (the series grows in place: points already indexed
 * must not change); indexing n points at once costs one pass over them.
 */
export class MinMaxIndex {
  /** The series (read only below `length`). */
  values: ArrayLike<number> = [];
  /** Points taken in (the index itself may be built only up to `indexed`, see catchUp). */
  length = 0;
  private indexed = 0;
  // levels[k − BASE] for blocks of 2^k points: [lowest finite, highest finite, lowest positive] per block.
  private levels: Array<[Int32Array, Int32Array, Int32Array]> = [];

  /** Take in the points of `values` from `length` up to `n` (the points below `length` are as taken in before). */
  extend(values: ArrayLike<number>, n = values.length): void {
    this.values = values;
    if (n > this.length) this.length = n;
  }

  /** Build the index over the points taken in since it was last built. */
  private catchUp(): void {
    const from = this.indexed;
    const n = this.length;
    if (n <= from) return;
    this.indexed = n;
    for (let k = BASE; 1 << k <= n; k++) {
      const blocks = Math.ceil(n / (1 << k));
      const [low, high, lowPositive] = this.grow(k, blocks);
      // The blocks that hold new points: the last one indexed before (if partial) and those after it.
      if (k === BASE) {
        for (let b = from >> k; b < blocks; b++) {
          const start = b << k;
          const end = Math.min(n, start + (1 << k));
          scanPoints(this.values, start, end, false, this.found);
          low[b] = this.found[0];
          high[b] = this.found[1];
          scanPoints(this.values, start, end, true, this.found);
          lowPositive[b] = this.found[0];
        }
        continue;
      }
      const below = this.levels[k - 1 - BASE];
      const v = this.values;
      for (let b = from >> k; b < blocks; b++) {
        const left = 2 * b;
        const right = (left + 1) << (k - 1) < n ? left + 1 : -1;
        low[b] = right < 0 ? below[0][left] : earlier(v, below[0][left], below[0][right], false);
        high[b] = right < 0 ? below[1][left] : earlier(v, below[1][left], below[1][right], true);
        lowPositive[b] = right < 0 ? below[2][left] : earlier(v, below[2][left], below[2][right], false);
      }
    }
  }

  /**
   * Into out[0] the index of the first lowest point of lo..hi−1 (finite; above 0 when `positiveOnly`),
   * into out[1] the first highest (finite, and above 0 when `positiveOnly`); −1 for none.
   */
  range(lo: number, hi: number, positiveOnly: boolean, out: [number, number]): void {
    if (hi - lo <= LINEAR_MAX) {
      scanPoints(this.values, lo, hi, positiveOnly, out);
      return;
    }
    this.catchUp();
    this.scan(lo, hi, positiveOnly);
    out[0] = this.found[0];
    out[1] = this.found[1];
  }

  /** What `scan` found: [lowest, highest]. */
  private readonly found: [number, number] = [-1, -1];

  /** `range` over the blocks of the index that fit in lo..hi−1 and the single points around them. */
  private scan(lo: number, hi: number, positiveOnly: boolean): void {
    const top = this.levels.length > 0 ? BASE + this.levels.length - 1 : 0;
    const v = this.values;
    // NaN fails every comparison; the initial bounds leave out ±Infinity; `floor` the values ≤ 0 on a log axis.
    const floor = positiveOnly ? 0 : -Infinity;
    let lowest = -1;
    let highest = -1;
    let lowValue = Infinity;
    let highValue = -Infinity;
    for (let i = lo; i < hi; ) {
      // The largest block that starts at i and ends by hi: limited by i's alignment and by hi − i.
      const k = Math.min(i === 0 ? top : 31 - Math.clz32(i & -i), 31 - Math.clz32(hi - i), top);
      let low = i;
      let high = i;
      if (k < BASE) i++;
      else {
        const level = this.levels[k - BASE];
        low = level[positiveOnly ? 2 : 0][i >> k];
        high = level[1][i >> k];
        i += 1 << k;
      }
      if (low >= 0 && v[low] < lowValue && v[low] > floor) {
        lowest = low;
        lowValue = v[low];
      }
      if (high >= 0 && v[high] > highValue && v[high] < Infinity) {
        highest = high;
        highValue = v[high];
      }
    }
    this.found[0] = lowest;
    // The highest finite point is not above 0: there is no positive point at all.
    this.found[1] = highValue > floor ? highest : -1;
  }

  /** Level k with room for `blocks` blocks (doubling, so that appending one point at a time is amortized O(1)). */
  private grow(k: number, blocks: number): [Int32Array, Int32Array, Int32Array] {
    if (this.levels.length <= k - BASE) this.levels.push([new Int32Array(0), new Int32Array(0), new Int32Array(0)]);
    const level = this.levels[k - BASE];
    if (level[0].length >= blocks) return level;
    const size = Math.max(blocks, 2 * level[0].length, 16);
    for (let m = 0; m < 3; m++) {
      const grown = new Int32Array(size);
      grown.set(level[m]);
      level[m] = grown;
    }
    return level;
  }
}

/** Of two candidates a and b (a left of b, −1 for none), the lower (or `higher`) one; a tie keeps a. */
function earlier(v: ArrayLike<number>, a: number, b: number, higher: boolean): number {
  if (a < 0) return b;
  if (b < 0) return a;
  return (higher ? v[b] > v[a] : v[b] < v[a]) ? b : a;
}

/**
 * `range` by reading every point of lo..hi−1 (same answers: first lowest and first highest, finite,
 * above 0 when `positiveOnly`; −1 for none), for short ranges and the index's smallest blocks.
 */
function scanPoints(v: ArrayLike<number>, lo: number, hi: number, positiveOnly: boolean, out: [number, number]): void {
  // NaN fails every comparison; the initial bounds leave out ±Infinity; `floor` the values ≤ 0 on a log axis.
  const floor = positiveOnly ? 0 : -Infinity;
  let lowest = -1;
  let highest = -1;
  let lowValue = Infinity;
  let highValue = -Infinity;
  for (let i = lo; i < hi; i++) {
    const value = v[i];
    if (value < lowValue && value > floor) {
      lowest = i;
      lowValue = value;
    }
    if (value > highValue && value < Infinity) {
      highest = i;
      highValue = value;
    }
  }
  out[0] = lowest;
  // The highest finite point is not above 0: there is no positive point at all.
  out[1] = highValue > floor ? highest : -1;
}
