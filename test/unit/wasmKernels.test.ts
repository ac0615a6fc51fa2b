import * as tf from '@tensorflow/tfjs-core';
import '@tensorflow/tfjs-backend-cpu';
import '@tensorflow/tfjs-backend-wasm';
import '@tensorflow/tfjs-core/dist/register_all_gradients';
import { beforeAll, describe, expect, it } from 'vitest';
import { installTransposedMatMulWasm, uninstallTransposedMatMulWasm } from '../../agents/backend/transposedMatMulWasm.js';
import { registerWasmGradientKernels, wasmGradientKernelNames } from '../../agents/backend/wasmKernels.js';

type Pad = 'same' | 'valid';
interface Case {
  x: [number, number, number, number];
  filter: [number, number, number, number];
  strides: number | [number, number];
  pad: Pad;
}

const cases: Case[] = [
  { x: [2, 7, 7, 3], filter: [3, 3, 3, 4], strides: 1, pad: 'same' },
  { x: [2, 8, 8, 2], filter: [3, 3, 2, 5], strides: 2, pad: 'same' },
  { x: [1, 9, 9, 1], filter: [3, 3, 1, 2], strides: 2, pad: 'valid' },
  { x: [3, 10, 11, 4], filter: [5, 3, 4, 6], strides: [2, 3], pad: 'same' },
  { x: [2, 6, 7, 3], filter: [2, 4, 3, 2], strides: [1, 2], pad: 'valid' },
  { x: [2, 5, 5, 3], filter: [1, 1, 3, 2], strides: 1, pad: 'valid' },
  // The zoo cnn's two conv layers at batch 16.
  { x: [16, 28, 28, 1], filter: [3, 3, 1, 8], strides: 1, pad: 'same' },
  { x: [16, 14, 14, 8], filter: [3, 3, 8, 16], strides: 1, pad: 'same' },
];

/** Deterministic, sign-mixed values (no RNG, so both backends see identical inputs). */
function wave(n: number, freq: number): Float32Array {
  return Float32Array.from({ length: n }, (_, i) => Math.sin(i * freq + 0.3));
}

function backpropFilter(c: Case, backend: string): Float32Array {
  const outShape = tf.backend_util.computeConv2DInfo(c.x, c.filter, c.strides, 1, c.pad).outShape;
  return tf.tidy(() => {
    const x = tf.tensor4d(wave(tf.util.sizeFromShape(c.x), 0.37), c.x);
    const dy = tf.tensor4d(wave(tf.util.sizeFromShape(outShape), 0.11), outShape);
    const attrs = { strides: c.strides, pad: c.pad, dataFormat: 'NHWC', filterShape: c.filter };
    expect(tf.getBackend()).toBe(backend);
    const dw = tf.engine().runKernel('Conv2DBackpropFilter', { x, dy }, attrs as unknown as tf.NamedAttrMap) as tf.Tensor;
    expect(dw.shape).toEqual(c.filter);
    return dw.dataSync() as Float32Array;
  });
}

/** max |a − b| relative to the largest magnitude of the reference (entries near zero sum many terms). */
function relativeError(got: Float32Array, want: Float32Array): number {
  let diff = 0;
  let scale = 0;
  for (let i = 0; i < want.length; i++) {
    diff = Math.max(diff, Math.abs(got[i] - want[i]));
    scale = Math.max(scale, Math.abs(want[i]));
  }
  return diff / scale;
}

describe('wasm gradient kernels', () => {
  beforeAll(async () => {
    await tf.setBackend('wasm');
    registerWasmGradientKernels();
  });

  it('fills only what wasm lacks, once', () => {
    expect(wasmGradientKernelNames()).toEqual(['Conv2DBackpropFilter', 'UnsortedSegmentSum', 'DepthwiseConv2dNativeBackpropFilter', 'DepthwiseConv2dNativeBackpropInput', 'BatchMatMul(transposed)']);
    expect(tf.getKernel('Conv2DBackpropFilter', 'wasm')).toBeTruthy();
    // These exist natively on wasm and must stay the native ones.
    for (const name of ['Conv2DBackpropInput', 'MaxPoolGrad', 'AvgPoolGrad']) expect(tf.getKernel(name, 'wasm')).toBeTruthy();
    expect(registerWasmGradientKernels()).toEqual([]);
  });

  it('can put the stock BatchMatMul back and wrap it again', () => {
    const wrapped = tf.getKernel('BatchMatMul', 'wasm');
    expect(uninstallTransposedMatMulWasm()).toBe(true);
    expect(tf.getKernel('BatchMatMul', 'wasm')).not.toBe(wrapped);
    expect(uninstallTransposedMatMulWasm()).toBe(false);
    expect(installTransposedMatMulWasm()).toBe(true);
    expect(installTransposedMatMulWasm()).toBe(false);
  });

  it.each(cases)('Conv2DBackpropFilter x=$x filter=$filter strides=$strides $pad matches cpu', async (c) => {
    await tf.setBackend('cpu');
    const want = backpropFilter(c, 'cpu');
    await tf.setBackend('wasm');
    const before = tf.engine().backend.numDataIds();
    const got = backpropFilter(c, 'wasm');
    expect(relativeError(got, want)).toBeLessThan(1e-4);
    // Every intermediate the kernel made inside the wasm heap is released.
    expect(tf.engine().backend.numDataIds()).toBe(before);
  });

  it('makes conv2d trainable on wasm: tf.grad agrees with cpu', async () => {
    const gradOf = (backend: string) =>
      tf.tidy(() => {
        const x = tf.tensor4d(wave(2 * 9 * 9 * 3, 0.21), [2, 9, 9, 3]);
        const w = tf.tensor4d(wave(3 * 3 * 3 * 4, 0.53), [3, 3, 3, 4]);
        expect(tf.getBackend()).toBe(backend);
        const g = tf.grad((k: tf.Tensor) => tf.sum(tf.square(tf.relu(tf.conv2d(x, k as tf.Tensor4D, [2, 2], 'same')))))(w);
        return g.dataSync() as Float32Array;
      });
    await tf.setBackend('cpu');
    const want = gradOf('cpu');
    await tf.setBackend('wasm');
    expect(relativeError(gradOf('wasm'), want)).toBeLessThan(1e-4);
  });

  it.each([
    { a: [64, 512], b: [784, 512], transposeA: false, transposeB: true },
    { a: [64, 784], b: [64, 512], transposeA: true, transposeB: false },
    { a: [7, 5], b: [3, 7], transposeA: true, transposeB: true },
    { a: [6, 4], b: [4, 3], transposeA: false, transposeB: false },
    { a: [2, 5, 4], b: [2, 3, 5], transposeA: true, transposeB: true },
    { a: [3, 4, 5], b: [1, 6, 5], transposeA: false, transposeB: true }, // broadcast batch
  ])('BatchMatMul a=$a b=$b tA=$transposeA tB=$transposeB matches cpu', async ({ a, b, transposeA, transposeB }) => {
    const product = (backend: string) =>
      tf.tidy(() => {
        expect(tf.getBackend()).toBe(backend);
        const ta = tf.tensor(wave(tf.util.sizeFromShape(a), 0.29), a);
        const tb = tf.tensor(wave(tf.util.sizeFromShape(b), 0.13), b);
        const out = tf.matMul(ta, tb, transposeA, transposeB);
        return { shape: out.shape, values: out.dataSync() as Float32Array };
      });
    await tf.setBackend('cpu');
    const want = product('cpu');
    await tf.setBackend('wasm');
    const before = tf.engine().backend.numDataIds();
    const got = product('wasm');
    expect(got.shape).toEqual(want.shape);
    expect(relativeError(got.values, want.values)).toBeLessThan(1e-5);
    expect(tf.engine().backend.numDataIds()).toBe(before);
  });

  it('refuses NCHW with a clear message', async () => {
    await tf.setBackend('wasm');
    const x = tf.zeros([1, 2, 5, 5]);
    const dy = tf.zeros([1, 2, 5, 5]);
    const attrs = { strides: 1, pad: 'same', dataFormat: 'NCHW', filterShape: [3, 3, 2, 2] };
    expect(() => tf.engine().runKernel('Conv2DBackpropFilter', { x, dy }, attrs as unknown as tf.NamedAttrMap)).toThrow(/only NHWC/);
    tf.dispose([x, dy]);
  });
});
