import { decimate, lowerBound } from './downsample';
import type { Decimated } from './downsample';
import { MinMaxIndex } from './minMaxIndex';
import { EmaSmoother } from './smoothing';

/**
 * What one chart keeps of its series between frames, so that a live update costs the new points only:
 * the raw values' MinMaxIndex, and, when smoothed, the running EMA and the smoothed values' index.
 *
 * The store appends to the same arrays (renderer/src/store/metrics.ts): the same x and y arrays, longer
 * than before, are new points appended, and only those are smoothed and indexed. New arrays, shorter
 * ones or a new smoothing weight start again from the first point.
 */
export class ChartSeries {
  private x: ArrayLike<number> = [];
  private y: ArrayLike<number> = [];
  /** Points taken in so far (the shorter of x and y). */
  length = 0;
  private raw = new MinMaxIndex();
  private weight: number | null = null;
  private smoother: EmaSmoother | null = null;
  private smoothed: MinMaxIndex | null = null;

  /**
   * Take in the newest x and y and the smoothing weight (null: not smoothed). Says whether anything
   * changed since the last call, that is, whether what is drawn must be decimated again.
   */
  sync(x: ArrayLike<number>, y: ArrayLike<number>, weight: number | null): boolean {
    const n = Math.min(x.length, y.length);
    const appended = x === this.x && y === this.y && n >= this.length;
    const reweighted = weight !== this.weight;
    if (appended && n === this.length && !reweighted) return false;
    if (!appended) {
      this.x = x;
      this.y = y;
      this.raw = new MinMaxIndex();
    }
    this.raw.extend(y, n);
    if (!appended || reweighted) {
      this.weight = weight;
      this.smoother = weight === null ? null : new EmaSmoother(weight);
      this.smoothed = weight === null ? null : new MinMaxIndex();
    }
    if (this.smoother && this.smoothed) {
      // A series that stopped being constant is smoothed again from its start: index it again too.
      if (this.smoother.extend(y, n) < this.smoothed.length) this.smoothed = new MinMaxIndex();
      this.smoothed.extend(this.smoother.values, n);
    }
    this.length = n;
    return true;
  }

  /**
   * The points to draw in `columns` pixel columns: all steps, or those in the zoomed x window (with one
   * point either side, so the line runs to the plot's edges). The smoothed series follows the raw one.
   */
  decimate(columns: number, zoom: [number, number] | null, positiveOnly: boolean): Decimated {
    const n = this.length;
    const lo = zoom ? Math.max(0, lowerBound(this.x, zoom[0], 0, n) - 1) : 0;
    const hi = zoom ? Math.min(n, lowerBound(this.x, zoom[1], 0, n) + 1) : n;
    return decimate(this.x, this.smoothed ? [this.raw, this.smoothed] : [this.raw], columns, lo, hi, positiveOnly);
  }
}
