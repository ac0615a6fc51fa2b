/**
 * TensorBoard's scalar smoothing: an exponential moving average with debiasing (its "classic"
 * smoothing, tensorboard/webapp/widgets/line_chart_v2/lib/data_transformer_utils.ts). With weight w
 * each point is s_i = w·s_{i−1} + (1−w)·y_i from s = 0, divided by 1 − w^n (n finite points so far),
 * which removes the pull towards zero at the start that a plain EMA from 0 has. Non-finite values
 * pass through unchanged and do not count; a constant series and w = 0 come back as they are.
 *
 * The average is a running state, so a live series is smoothed as it grows: `extend` smooths only the
 * points appended since, with the same operations in the same order as smoothing the whole series
 * at once (the results are equal to the last bit). The one exception is a series that stops being
 * constant: it was copied while constant, so it is smoothed again from its start, once.
 */
export class EmaSmoother {
  /** The smoothed points 0..length−1 (the buffer grows by doubling; read no further than length). */
  values = new Float64Array(0);
  length = 0;
  readonly weight: number;
  private last = 0;
  private debias = 1;
  private constant = true;

  constructor(weight: number) {
    this.weight = Math.min(Math.max(weight, 0), 1);
  }

  /**
   * Smooth the points of `y` from `length` up to `n` (y's first `length` points are those smoothed
   * before). Returns the first point whose smoothed value was written: `length` before the call, or 0.
   */
  extend(y: ArrayLike<number>, n = y.length): number {
    if (n <= this.length) return this.length;
    if (n > this.values.length) {
      // A typed array: `new Array(n)` of 100,000 is a slow dictionary-mode array in V8.
      const grown = new Float64Array(Math.max(n, 2 * this.values.length, 1024));
      grown.set(this.values.subarray(0, this.length));
      this.values = grown;
    }
    let from = this.length;
    if (this.weight === 0 || this.constant) {
      for (let i = Math.max(from, 1); i < n && this.constant; i++) this.constant = y[i] === y[0];
      if (this.weight === 0 || this.constant) {
        for (let i = from; i < n; i++) this.values[i] = y[i];
        this.length = n;
        return from;
      }
      // No longer constant: the copied start is smoothed as well.
      from = 0;
    }
    const w = this.weight;
    const out = this.values;
    let { last, debias } = this;
    for (let i = from; i < n; i++) {
      const v = y[i];
      if (!Number.isFinite(v)) {
        out[i] = v;
        continue;
      }
      last = last * w + (1 - w) * v;
      // w^n (n finite points so far) as a running product rather than Math.pow per point.
      debias *= w;
      out[i] = w === 1 ? last : last / (1 - debias);
    }
    this.last = last;
    this.debias = debias;
    this.length = n;
    return from;
  }
}

/** A whole series smoothed at once (see EmaSmoother). */
export function smoothEma(y: ArrayLike<number>, weight: number): Float64Array {
  const smoother = new EmaSmoother(weight);
  smoother.extend(y);
  return smoother.values.slice(0, smoother.length);
}
