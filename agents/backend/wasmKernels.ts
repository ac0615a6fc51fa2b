import { getKernel, registerKernel, type KernelConfig } from '@tensorflow/tfjs-core';
import { conv2dBackpropFilterWasmConfig } from './conv2dBackpropFilterWasm.js';
import { cpuFallbackConfigs, CPU_FALLBACK_KERNELS } from './cpuFallbackKernels.js';
import { installTransposedMatMulWasm } from './transposedMatMulWasm.js';

/**
 * Gradient kernels the wasm backend of tfjs 4.22 lacks and Shoal's layers need. Checked against the
 * registry: Conv2DBackpropInput, MaxPoolGrad, AvgPoolGrad and the element-wise gradients exist on
 * wasm; only Conv2DBackpropFilter is missing for the zoo (conv2d + maxPool2d + dense).
 *
 * Also missing: DepthwiseConv2dNativeBackpropFilter/Input (depthwise and separable convolutions) and
 * UnsortedSegmentSum (Embedding gradients): those run the cpu kernel (cpuFallbackKernels.ts).
 */
const fills: KernelConfig[] = [conv2dBackpropFilterWasmConfig];

/** Name under which the transposed-matMul speed-up is reported (it wraps, not adds, BatchMatMul). */
export const TRANSPOSED_MATMUL = 'BatchMatMul(transposed)';

/**
 * Register the missing wasm gradient kernels, and the fast path for transposed matMul that every dense
 * backward uses (see transposedMatMulWasm.ts). Idempotent; a kernel a future tfjs ships natively is left
 * alone (the native one wins). Call after importing @tensorflow/tfjs-backend-wasm. Returns what it
 * installed now.
 */
export function registerWasmGradientKernels(): string[] {
  const added: string[] = [];
  for (const config of [...fills, ...cpuFallbackConfigs()]) {
    if (getKernel(config.kernelName, config.backendName)) continue;
    registerKernel(config);
    added.push(config.kernelName);
  }
  if (installTransposedMatMulWasm()) added.push(TRANSPOSED_MATMUL);
  return added;
}

/** Names of what this module can install, for reports and tests. */
export function wasmGradientKernelNames(): string[] {
  return [...fills.map((k) => k.kernelName), ...CPU_FALLBACK_KERNELS, TRANSPOSED_MATMUL];
}
