/**
 * Datasheet defaults for common devices, used until agents have measured the real hosts.
 *
 * "Sustained" is what a large matrix multiply keeps up, not the marketing peak. Assumption, applied to
 * every GPU below unless its entry says otherwise: sustained = 80% of the datasheet fp32 (CUDA-core)
 * peak and 70% of the dense tensor-core fp16/bf16 peak (no structured sparsity) — roughly what cuBLAS
 * GEMMs reach at large sizes. fp32 means true fp32: TF32 tensor cores are not counted, since they
 * would break the plan invariant that parallel training matches one process within float32 rounding.
 * Memory is the nominal capacity in GiB (NVIDIA's "GB" for HBM/GDDR is binary; nvidia-smi shows a
 * little less, which the cost model's headroom absorbs).
 */
import type { Flops } from './spec.js';

export interface DevicePreset {
  model: string;
  memoryBytes: number;
  flops: Flops;
}

const GiB = 2 ** 30;
const TERA = 1e12;
const FP32_SUSTAINED = 0.8;
const TENSOR_SUSTAINED = 0.7;

/** A GPU from its datasheet peaks in TFLOP/s; `half` is the dense tensor-core fp16 peak, `bf16` if supported. */
function gpu(model: string, memoryGiB: number, fp32Peak: number, half: number, bf16: boolean, fp32Eff = FP32_SUSTAINED, tensorEff = TENSOR_SUSTAINED): DevicePreset {
  const fp16 = half * TERA * tensorEff;
  return { model, memoryBytes: memoryGiB * GiB, flops: { fp32: fp32Peak * TERA * fp32Eff, fp16, ...(bf16 ? { bf16: fp16 } : {}) } };
}

export const DEVICE_PRESETS: Readonly<Record<string, DevicePreset>> = {
  // V100 SXM2 datasheet: 15.7 TFLOP/s fp32, 125 fp16 tensor; Volta has no bf16.
  'v100-16gb': gpu('Tesla V100-SXM2-16GB', 16, 15.7, 125, false),
  'v100-32gb': gpu('Tesla V100-SXM2-32GB', 32, 15.7, 125, false),
  // A100 SXM4 datasheet: 19.5 fp32, 312 fp16/bf16 tensor (dense).
  'a100-40gb': gpu('A100-SXM4-40GB', 40, 19.5, 312, true),
  'a100-80gb': gpu('A100-SXM4-80GB', 80, 19.5, 312, true),
  // H100 SXM5 datasheet: 67 fp32, 989 fp16/bf16 tensor (dense; 1,979 is with sparsity).
  'h100-80gb': gpu('H100-SXM5-80GB', 80, 67, 989, true),
  // H200 SXM: the H100's compute with 141 GB of HBM3e.
  'h200-141gb': gpu('H200-SXM-141GB', 141, 67, 989, true),
  // GA102 whitepaper: 35.6 fp32; 71 fp16/bf16 tensor with fp32 accumulate (what training uses).
  'rtx-3090': gpu('GeForce RTX 3090', 24, 35.6, 71, true),
  // Ada whitepaper: 82.6 fp32; 165.2 fp16/bf16 tensor with fp32 accumulate.
  'rtx-4090': gpu('GeForce RTX 4090', 24, 82.6, 165.2, true),
  // T4 datasheet: 8.1 fp32, 65 fp16 tensor; its 70 W cap holds clocks far below boost under load, so
  // assume 60% / 45% sustained instead of 80% / 70%.
  t4: gpu('Tesla T4', 16, 8.1, 65, false, 0.6, 0.45),
  // One x86 core running tfjs on wasm with SIMD: 512² matMul measured ≈ 21 GFLOP/s (ENVIRONMENT.md).
  // Memory: Node's default heap limit per agent process, about 4 GiB.
  'cpu-core': { model: 'CPU core (tfjs wasm)', memoryBytes: 4 * GiB, flops: { fp32: 20e9 } },
};

export function devicePreset(id: string): DevicePreset | undefined {
  return Object.prototype.hasOwnProperty.call(DEVICE_PRESETS, id) ? DEVICE_PRESETS[id] : undefined;
}
