import * as tf from '@tensorflow/tfjs-core';
import '@tensorflow/tfjs-backend-cpu';
import { beforeAll, describe, expect, it } from 'vitest';
import { PipeMareSchema } from '../../engine/plan/plan.js';
import { DiscrepancyCorrection, lrMultiplier } from '../../agents/schedule/pipemare.js';

beforeAll(async () => {
  await tf.setBackend('cpu');
});

const options = PipeMareSchema.parse({ warmupUpdates: 100, decay: 0.1 });

describe('PipeMare T1: learning-rate rescheduling α·τ^−(1−min(k/K,1))', () => {
  it('divides the step by the delay at first and warms up to the base rate over K updates', () => {
    expect(lrMultiplier(4, 0, options)).toBeCloseTo(1 / 4, 12);
    expect(lrMultiplier(4, 50, options)).toBeCloseTo(4 ** -0.5, 12);
    expect(lrMultiplier(4, 100, options)).toBe(1);
    expect(lrMultiplier(4, 1000, options)).toBe(1);
  });
  it('leaves stages without delay and disabled rescheduling alone', () => {
    expect(lrMultiplier(0, 0, options)).toBe(1);
    expect(lrMultiplier(1, 0, options)).toBe(1);
    expect(lrMultiplier(4, 0, { ...options, lrRescheduling: false })).toBe(1);
  });
});

describe('PipeMare T2: discrepancy correction ŵ = w − τ·δ', () => {
  it('tracks the velocity of steady updates and extrapolates the forward-time weights', () => {
    const correction = new DiscrepancyCorrection(options);
    const delay = 2;
    const gamma = 0.1 ** (1 / delay);
    let w: tf.Tensor = tf.tensor1d([1, 2]);
    let expectedDelta = [0, 0];
    for (let k = 0; k < 3; k++) {
      const next = tf.add(w, tf.tensor1d([0.5, -1]));
      correction.observe([w], [next], delay);
      // δ_k = γ·δ_{k−1} + (1−γ)·(w_k − w_{k−1})
      expectedDelta = expectedDelta.map((d, i) => gamma * d + (1 - gamma) * [0.5, -1][i]);
      w = next;
    }
    const corrected = correction.weightsFor([w], delay)!;
    const current = Array.from(w.dataSync());
    expect(Array.from(corrected[0].dataSync())).toEqual(current.map((v, i) => expect.closeTo(v - delay * expectedDelta[i], 5)));
    expect(correction.size([w], delay)).toBeGreaterThan(0);
  });
  it('does nothing when switched off or without delay', () => {
    const off = new DiscrepancyCorrection({ ...options, discrepancyCorrection: false });
    off.observe([tf.tensor1d([0])], [tf.tensor1d([1])], 3);
    expect(off.weightsFor([tf.tensor1d([1])], 3)).toBeNull();
    const on = new DiscrepancyCorrection(options);
    on.observe([tf.tensor1d([0])], [tf.tensor1d([1])], 3);
    expect(on.weightsFor([tf.tensor1d([1])], 0)).toBeNull();
  });
});
