import { findBackend, getKernel, type KernelBackend, type KernelConfig, type TensorInfo } from '@tensorflow/tfjs-core';

/**
 * Kernels the wasm backend of tfjs 4.22 lacks, run by the cpu backend's own kernel: the inputs are
 * copied out of wasm memory, the cpu kernel computes, and the result is copied back. Identical
 * results at cpu speed, for ops that are a small part of a step (an Embedding's gradient, a depthwise
 * convolution's); a kernel a busy layer needs is worth writing for wasm instead (conv2dBackpropFilterWasm.ts).
 */
export const CPU_FALLBACK_KERNELS = ['UnsortedSegmentSum', 'DepthwiseConv2dNativeBackpropFilter', 'DepthwiseConv2dNativeBackpropInput'];

export function cpuFallbackConfigs(): KernelConfig[] {
  return CPU_FALLBACK_KERNELS.flatMap((kernelName) => {
    const cpuKernel = getKernel(kernelName, 'cpu');
    if (!cpuKernel) return [];
    return [
      {
        kernelName,
        backendName: 'wasm',
        kernelFunc: ({ inputs, backend, attrs }) => {
          const cpu = findBackend('cpu') as KernelBackend;
          const wasm = backend as KernelBackend;
          const copied: Record<string, TensorInfo> = {};
          for (const [name, info] of Object.entries(inputs)) {
            if (!info) continue;
            copied[name] = { dataId: cpu.write(wasm.readSync(info.dataId), info.shape, info.dtype), shape: info.shape, dtype: info.dtype };
          }
          const result = cpuKernel.kernelFunc({ inputs: copied, backend: cpu, attrs }) as TensorInfo;
          const out: TensorInfo = { dataId: wasm.write(cpu.readSync(result.dataId), result.shape, result.dtype), shape: result.shape, dtype: result.dtype };
          for (const info of [...Object.values(copied), result]) cpu.disposeData(info.dataId);
          return out;
        },
      },
    ];
  });
}
