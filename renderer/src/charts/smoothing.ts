/**
 * TensorBoard's scalar smoothing: an exponential moving average with debiasing (its "classic"
 * smoothing, tensorboard/webapp/widgets/line_chart_v2/lib/data_transformer_utils.ts). With weight w
 * each point is s_i = w·s_{i−1} + (1−w)·y_i from s = 0, divided by 1 − w^n (n finite points so far),
 * which removes the pull towards zero at the start that a plain EMA from 0 has. Non-finite values
 * pass through unchanged and do not count; a constant series and w = 0 come back as they are.
 */
export function smoothEma(y: ArrayLike<number>, weight: number): Float64Array {
  const n = y.length;
  // A typed array: `new Array(n)` of 100,000 is a slow dictionary-mode array in V8.
  const out = new Float64Array(n);
  const w = Math.min(Math.max(weight, 0), 1);
  let constant = true;
  for (let i = 1; i < n && constant; i++) constant = y[i] === y[0];
  if (w === 0 || constant) {
    for (let i = 0; i < n; i++) out[i] = y[i];
    return out;
  }
  let last = 0;
  let debias = 1;
  for (let i = 0; i < n; i++) {
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
  return out;
}
