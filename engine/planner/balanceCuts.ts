/**
 * Cut layers 0..n−1 into `rates.length` contiguous stages at allowed positions only, so that the
 * slowest stage — its work divided by its rate (the stage's devices' combined speed) — is as fast as
 * possible. Dynamic programming over the allowed cuts (presets.balancedStages does the same for equal
 * devices and any cut); stage order matters because on a mixed cluster each stage has its own rate.
 * Returns the stage boundaries [0, c1, …, n], or undefined when there are too few allowed cuts.
 */
export function balanceCuts(work: number[], cuts: number[], rates: number[]): number[] | undefined {
  const p = rates.length;
  const n = work.length;
  const points = [0, ...cuts.filter((c) => c > 0 && c < n), n];
  if (points.length - 1 < p) return undefined;
  const prefix = [0];
  for (const w of work) prefix.push(prefix[prefix.length - 1] + w + 1);
  const span = (a: number, b: number) => prefix[points[b]] - prefix[points[a]];
  const q = points.length;
  // best[k][j]: least possible slowest-stage time when the first k stages end at points[j].
  let best = new Array<number>(q).fill(Infinity);
  best[0] = 0;
  const from: number[][] = [];
  for (let k = 1; k <= p; k++) {
    const next = new Array<number>(q).fill(Infinity);
    const arg = new Array<number>(q).fill(-1);
    // The last stage must end at n; earlier stages leave room for the stages after them.
    const lastJ = k === p ? q - 1 : q - 1 - (p - k);
    for (let j = k === p ? q - 1 : k; j <= lastJ; j++) {
      for (let i = k - 1; i < j; i++) {
        if (best[i] === Infinity) continue;
        const value = Math.max(best[i], span(i, j) / rates[k - 1]);
        if (value < next[j]) {
          next[j] = value;
          arg[j] = i;
        }
      }
    }
    from.push(arg);
    best = next;
  }
  if (best[q - 1] === Infinity) return undefined;
  const bounds = [n];
  let j = q - 1;
  for (let k = p; k >= 1; k--) {
    j = from[k - 1][j];
    bounds.unshift(points[j]);
  }
  return bounds;
}
