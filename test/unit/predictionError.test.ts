import { describe, expect, it } from 'vitest';
import { kendallTau, meanAbsRelativeError } from '../../engine/cost/predictionError.js';

describe('prediction error helpers', () => {
  it('mean absolute relative error is relative to the measurement', () => {
    expect(meanAbsRelativeError([])).toBe(0);
    expect(meanAbsRelativeError([{ predicted: 110, measured: 100 }, { predicted: 40, measured: 50 }])).toBeCloseTo((0.1 + 0.2) / 2, 12);
  });

  it("Kendall's τ: same order 1, reversed −1, one swap of four", () => {
    expect(kendallTau([1, 2, 3, 4], [10, 20, 30, 40])).toBe(1);
    expect(kendallTau([1, 2, 3, 4], [4, 3, 2, 1])).toBe(-1);
    // One discordant pair of six: (5 − 1) / 6.
    expect(kendallTau([1, 2, 3, 4], [1, 3, 2, 4])).toBeCloseTo(4 / 6, 12);
  });

  it("Kendall's τ-b discounts ties", () => {
    // x ties one pair: 5 pairs untied in x, 6 in y, all 5 concordant: 5 / √(5·6).
    expect(kendallTau([1, 1, 2, 3], [1, 2, 3, 4])).toBeCloseTo(5 / Math.sqrt(30), 12);
    expect(() => kendallTau([1], [1, 2])).toThrow(/equal length/);
  });
});
