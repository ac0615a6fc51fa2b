import type { ProbeFacts } from './ssh/preflightProbe.js';

/**
 * Whether a host can run `@tensorflow/tfjs-node-gpu` 4.22, judged from its preflight facts. That
 * package loads libtensorflow 2.9.1, built for CUDA 11.2 and cuDNN 8.1 on linux-x86_64 only (tfjs has
 * had no release since 4.22.0), so TensorFlow dlopens these sonames and nothing newer: a host with
 * CUDA 12 alone, or an arm64 host, would otherwise train on the CPU without a word.
 */
export const TF_CUDA = '11.2';
export const TF_CUDNN = '8.1';
/** The sonames libtensorflow 2.9.1 asks the loader for (CUDA 11.x keeps one runtime soname). */
const NEEDED_LIBS = [
  { soname: 'libcudart.so.11.0', what: `the CUDA ${TF_CUDA} runtime`, install: "cuda-cudart-11-2 from NVIDIA's CUDA repository" },
  { soname: 'libcublas.so.11', what: `cuBLAS for CUDA ${TF_CUDA}`, install: 'libcublas-11-2' },
  { soname: 'libcudnn.so.8', what: `cuDNN ${TF_CUDNN}`, install: 'libcudnn8=8.1.1.*-1+cuda11.2' },
];
/** CUDA 11.x runs on any driver from 450.80.02 on (NVIDIA's minor-version compatibility). */
const MIN_DRIVER = [450, 80, 2];

export type GpuReadiness =
  /** No nvidia-smi: a CPU host, which is normal. */
  | { kind: 'no-gpu' }
  | { kind: 'ready'; summary: string }
  /** GPUs (or a GPU driver) are there but tfjs-node-gpu cannot use them: one line, why and what to install. */
  | { kind: 'unusable'; line: string };

/** The CUDA 11.2 / cuDNN 8.1 libraries the loader does not find, each with what provides it. */
export function missingCudaLibs(f: Pick<ProbeFacts, 'cudaLibs'>): Array<{ soname: string; what: string; install: string }> {
  return NEEDED_LIBS.filter((l) => !f.cudaLibs.includes(l.soname));
}

export function gpuReadiness(f: ProbeFacts): GpuReadiness {
  if (f.gpuError) return { kind: 'unusable', line: `nvidia-smi is installed but fails (${f.gpuError}): install or reload the NVIDIA driver (≥ ${MIN_DRIVER.join('.')}) so that nvidia-smi lists the GPUs.` };
  if (f.gpus.length === 0) return { kind: 'no-gpu' };
  const count = `${f.gpus.length} GPU${f.gpus.length === 1 ? '' : 's'}`;
  if (f.os !== undefined && f.os !== 'Linux') return { kind: 'unusable', line: `${count} on ${f.os}, but tfjs-node-gpu 4.22 runs on Linux only: use a Linux host for GPU training.` };
  if (f.arch !== undefined && f.arch !== 'x86_64')
    return { kind: 'unusable', line: `${count} on ${f.arch}, but tfjs-node-gpu 4.22 ships libtensorflow 2.9.1 for linux-x86_64 only (no ${f.arch} build exists): use an x86_64 host for GPU training.` };
  const driver = f.gpus[0].driver;
  if (olderThan(driver, MIN_DRIVER)) return { kind: 'unusable', line: `${count} with NVIDIA driver ${driver}, older than the ${MIN_DRIVER.join('.')} CUDA ${TF_CUDA} needs: upgrade the driver.` };
  const missing = missingCudaLibs(f);
  if (missing.length > 0) {
    const found = cudaVersionsFound(f.cudaLibs);
    return {
      kind: 'unusable',
      line:
        `${count}, but tfjs-node-gpu 4.22 (libtensorflow 2.9.1) needs CUDA ${TF_CUDA} and cuDNN ${TF_CUDNN} and the loader finds no ${missing.map((m) => m.soname).join(', ')}` +
        `${found ? ` (found only ${found})` : ''}: install ${missing.map((m) => `${m.what} (${m.install})`).join(', ')} beside any newer CUDA, and make them visible to ldconfig or LD_LIBRARY_PATH.`,
    };
  }
  return { kind: 'ready', summary: `${count}, driver ${driver}, CUDA ${TF_CUDA} and cuDNN ${TF_CUDNN} libraries found` };
}

function olderThan(version: string, min: number[]): boolean {
  const parts = version.split('.').map(Number);
  if (parts.some((p) => !Number.isFinite(p))) return false;
  for (let i = 0; i < min.length; i++) {
    const p = parts[i] ?? 0;
    if (p !== min[i]) return p < min[i];
  }
  return false;
}

/** "libcudart.so.12, libcudnn.so.9": what the host has instead, so the line says why it does not fit. */
function cudaVersionsFound(libs: string[]): string {
  return libs.filter((l) => /\.so\.\d/.test(l)).join(', ');
}
