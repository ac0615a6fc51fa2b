import * as tf from '@tensorflow/tfjs-core';
import '@tensorflow/tfjs-backend-cpu';
import '@tensorflow/tfjs-core/dist/register_all_gradients';
import { describe, expect, it } from 'vitest';
import { registerCpuKernelFixes } from '../../agents/backend/resizeNearestNeighborGradCpu.js';

/** Deterministic values in [-1, 1). */
const values = (n: number, seed: number) => Float32Array.from({ length: n }, (_, i) => (((i + 1) * 2654435761 * (seed + 1)) % 1000) / 500 - 1);

function gradient(shape: [number, number, number, number], size: [number, number], dyValues: Float32Array, alignCorners = false, halfPixelCenters = false): Float32Array {
  return tf.tidy(() => {
    const x = tf.tensor4d(values(shape.reduce((a, b) => a * b, 1), 1), shape);
    const dy = tf.tensor4d(dyValues, [shape[0], size[0], size[1], shape[3]]);
    const g = tf.grad((t: tf.Tensor) => tf.image.resizeNearestNeighbor(t as tf.Tensor4D, size, alignCorners, halfPixelCenters))(x, dy);
    return g.dataSync() as Float32Array;
  });
}

describe('ResizeNearestNeighborGrad on the cpu backend', () => {
  it('equals the analytic gradient of 2× up-sampling for a batch of several images', async () => {
    await tf.setBackend('cpu');
    registerCpuKernelFixes();
    const [b, h, w, c] = [3, 2, 3, 2];
    const dy = values(b * 2 * h * 2 * w * c, 2);
    const got = gradient([b, h, w, c], [2 * h, 2 * w], dy);
    // Each input pixel was copied to a 2×2 block: its gradient is the sum of that block's.
    const at = (n: number, i: number, j: number, d: number) => ((n * 2 * h + i) * 2 * w + j) * c + d;
    for (let n = 0; n < b; n++) for (let i = 0; i < h; i++) for (let j = 0; j < w; j++) for (let d = 0; d < c; d++) {
      const want = dy[at(n, 2 * i, 2 * j, d)] + dy[at(n, 2 * i + 1, 2 * j, d)] + dy[at(n, 2 * i, 2 * j + 1, d)] + dy[at(n, 2 * i + 1, 2 * j + 1, d)];
      expect(got[((n * h + i) * w + j) * c + d]).toBeCloseTo(want, 5);
    }
  });

  // The resize is linear, so its gradient is its transpose: d(x)·dy summed over the output, for each
  // input element e, is the forward pass of the one-hot image e dotted with dy.
  it('is the transpose of the forward resize with align corners, half-pixel centres and uneven sizes', async () => {
    const cases: Array<{ shape: [number, number, number, number]; size: [number, number]; align: boolean; half: boolean }> = [
      { shape: [2, 3, 4, 1], size: [5, 7], align: false, half: false },
      { shape: [2, 3, 4, 2], size: [5, 7], align: true, half: false },
      { shape: [3, 4, 3, 1], size: [2, 5], align: false, half: true },
    ];
    await tf.setBackend('cpu');
    registerCpuKernelFixes();
    for (const k of cases) {
      const n = k.shape.reduce((a, b) => a * b, 1);
      const dy = values(k.shape[0] * k.size[0] * k.size[1] * k.shape[3], 3);
      const got = gradient(k.shape, k.size, dy, k.align, k.half);
      const want = Array.from({ length: n }, (_, e) =>
        tf.tidy(() => {
          const oneHot = tf.tensor4d(Float32Array.from({ length: n }, (_, i) => (i === e ? 1 : 0)), k.shape);
          const out = tf.image.resizeNearestNeighbor(oneHot, k.size, k.align, k.half).dataSync() as Float32Array;
          return out.reduce((sum: number, v: number, i: number) => sum + v * dy[i], 0);
        }),
      );
      expect(Array.from(got).map((v) => +v.toFixed(5))).toEqual(want.map((v) => +v.toFixed(5)));
    }
  });
});
