import { describe, expect, it } from 'vitest';
import { globalBatchIndices, stepsPerEpoch } from '../../engine/data/dataOrder.js';
import { mnistSplitOrder } from '../../engine/data/mnistSplit.js';

describe('data order', () => {
  it('is a function of (seed, step) only', () => {
    expect(Array.from(globalBatchIndices(7, 3, 64, 8000))).toEqual(Array.from(globalBatchIndices(7, 3, 64, 8000)));
    expect(Array.from(globalBatchIndices(7, 3, 64, 8000))).not.toEqual(Array.from(globalBatchIndices(8, 3, 64, 8000)));
  });

  it('visits every training sample once per epoch', () => {
    const perEpoch = stepsPerEpoch(8000, 64);
    const seen = new Set<number>();
    for (let step = 0; step < perEpoch; step++) for (const i of globalBatchIndices(1, step, 64, 8000)) seen.add(i);
    expect(seen.size).toBe(perEpoch * 64);
  });

  it('reshuffles between epochs', () => {
    const perEpoch = stepsPerEpoch(8000, 64);
    expect(Array.from(globalBatchIndices(1, 0, 64, 8000))).not.toEqual(Array.from(globalBatchIndices(1, perEpoch, 64, 8000)));
  });

  it('the MNIST split is a fixed permutation of all 10,000 samples', () => {
    const order = mnistSplitOrder(10_000);
    expect(new Set(order).size).toBe(10_000);
    expect(Array.from(order.subarray(0, 5))).toEqual(Array.from(mnistSplitOrder(10_000).subarray(0, 5)));
  });
});
