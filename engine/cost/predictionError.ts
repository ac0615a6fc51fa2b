/**
 * How well predictions match measurements: the mean absolute relative error (what a user reads as
 * "off by 12 % on average") and Kendall's τ of the two orders (what a planner ranking plans needs).
 */

/** Mean of |predicted − measured| / measured over the pairs, as a fraction (0.12 = 12 %). */
export function meanAbsRelativeError(pairs: Array<{ predicted: number; measured: number }>): number {
  if (pairs.length === 0) return 0;
  return pairs.reduce((sum, p) => sum + Math.abs(p.predicted - p.measured) / Math.abs(p.measured), 0) / pairs.length;
}

/**
 * Kendall's τ-b between two equally long lists: (concordant − discordant) pairs, normalised so ties
 * in either list do not count against it. 1 = same order, −1 = reversed, 0 = unrelated.
 */
export function kendallTau(xs: number[], ys: number[]): number {
  if (xs.length !== ys.length) throw new Error(`kendallTau needs lists of equal length, got ${xs.length} and ${ys.length}.`);
  let concordant = 0;
  let discordant = 0;
  let tiesX = 0;
  let tiesY = 0;
  for (let i = 0; i < xs.length; i++) {
    for (let j = i + 1; j < xs.length; j++) {
      const dx = Math.sign(xs[i] - xs[j]);
      const dy = Math.sign(ys[i] - ys[j]);
      if (dx === 0 && dy === 0) continue;
      if (dx === 0) tiesX++;
      else if (dy === 0) tiesY++;
      else if (dx === dy) concordant++;
      else discordant++;
    }
  }
  const denominator = Math.sqrt((concordant + discordant + tiesX) * (concordant + discordant + tiesY));
  return denominator === 0 ? 0 : (concordant - discordant) / denominator;
}
