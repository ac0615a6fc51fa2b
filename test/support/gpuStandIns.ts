import { mkdirSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';

/**
 * Stand-ins for the programs a GPU server answers the preflight with — `nvidia-smi`, `ldconfig -p`,
 * `uname -sm` — printing what such servers print, for tests on a machine without a GPU. They are
 * stand-ins, named so: everything else (sshd, the shell that runs the probe, the agents) is real.
 */
export interface StandInMachine {
  /** One `--query-gpu=index,name,memory.total,uuid,driver_version --format=csv,noheader` line per GPU, without the index. */
  gpus: Array<{ name: string; mib: number }>;
  driver: string;
  /** What `ldconfig -p` lists of CUDA: [soname, path]. */
  cudaLibs: Array<[string, string]>;
  /** `uname -m` (default x86_64). */
  arch?: string;
  /** nvidia-smi fails with this message and exit 9 (no driver loaded). */
  smiFails?: string;
}

const CUDA_11_2: Array<[string, string]> = [
  ['libcudart.so.11.0', '/usr/local/cuda-11.2/targets/x86_64-linux/lib/libcudart.so.11.0'],
  ['libcublas.so.11', '/usr/local/cuda-11.2/targets/x86_64-linux/lib/libcublas.so.11'],
  ['libcudnn.so.8', '/usr/lib/x86_64-linux-gnu/libcudnn.so.8'],
];
const CUDA_12: Array<[string, string]> = [
  ['libcudart.so.12', '/usr/local/cuda-12.4/targets/x86_64-linux/lib/libcudart.so.12'],
  ['libcublas.so.12', '/usr/local/cuda-12.4/targets/x86_64-linux/lib/libcublas.so.12'],
  ['libcudnn.so.9', '/usr/lib/x86_64-linux-gnu/libcudnn.so.9'],
];

/** The servers item 8 of the GPU work names: a DGX A100, a workstation of mixed cards, and three that cannot run tfjs-node-gpu. */
export const MACHINES = {
  dgxA100: { gpus: Array.from({ length: 8 }, () => ({ name: 'NVIDIA A100-SXM4-80GB', mib: 81920 })), driver: '535.104.05', cudaLibs: CUDA_11_2 },
  rtx4090AndT4: {
    gpus: [...Array.from({ length: 4 }, () => ({ name: 'NVIDIA GeForce RTX 4090', mib: 24564 })), ...Array.from({ length: 2 }, () => ({ name: 'Tesla T4', mib: 15360 }))],
    driver: '550.54.14',
    cudaLibs: CUDA_11_2,
  },
  noDriver: {
    gpus: [],
    driver: '',
    cudaLibs: [],
    smiFails: "NVIDIA-SMI has failed because it couldn't communicate with the NVIDIA driver. Make sure that the latest NVIDIA driver is installed and running.",
  },
  cuda12Only: { gpus: Array.from({ length: 2 }, () => ({ name: 'NVIDIA H100 80GB HBM3', mib: 81559 })), driver: '550.54.15', cudaLibs: CUDA_12 },
  arm64: { gpus: [{ name: 'NVIDIA GH200 480GB', mib: 97871 }], driver: '550.54.15', cudaLibs: CUDA_12.map(([s, p]) => [s, p.replace('x86_64', 'aarch64')] as [string, string]), arch: 'aarch64' },
} satisfies Record<string, StandInMachine>;

/** A GPU's uuid as nvidia-smi prints it, made from its index so a test can tell GPUs apart. */
export function standInUuid(index: number): string {
  return `GPU-5a1f0c3e-7b2d-4c11-9e0a-${String(index).padStart(12, '0')}`;
}

/**
 * Write the stand-ins into `dir` (put it first on a host's PATH). `log`: each nvidia-smi call appends
 * its arguments and the CUDA_VISIBLE_DEVICES / TF_FORCE_GPU_ALLOW_GROWTH it ran with, so a test sees
 * each agent's own environment.
 */
export function writeGpuStandIns(dir: string, machine: StandInMachine, log?: string): string {
  mkdirSync(dir, { recursive: true });
  const lines = machine.gpus.map((g, i) => `print ${i} '${i}, ${g.name}, ${g.mib} MiB, ${standInUuid(i)}, ${machine.driver}'`);
  const smi = [
    '#!/bin/sh',
    '# A stand-in for nvidia-smi: the test machine has no GPU.',
    log ? `echo "nvidia-smi $* | CUDA_VISIBLE_DEVICES=\${CUDA_VISIBLE_DEVICES-unset} TF_FORCE_GPU_ALLOW_GROWTH=\${TF_FORCE_GPU_ALLOW_GROWTH-unset}" >> '${log}'` : '',
    machine.smiFails ? `echo "${machine.smiFails}"; exit 9` : '',
    'case "$*" in *--query-gpu=index,name,memory.total,uuid,driver_version*--format=csv,noheader*) ;; *) echo "stand-in nvidia-smi: unsupported arguments: $*" >&2; exit 2 ;; esac',
    'only=""; prev=""; for a in "$@"; do [ "$prev" = "-i" ] && only="$a"; prev="$a"; done',
    'print() { if [ -z "$only" ] || [ "$only" = "$1" ]; then echo "$2"; fi; }',
    ...lines,
    '',
  ];
  writeFileSync(join(dir, 'nvidia-smi'), smi.filter((l) => l !== '').join('\n') + '\n', { mode: 0o755 });
  const cache = machine.cudaLibs.map(([soname, path]) => `printf '\\t%s (libc6,x86-64) => %s\\n' '${soname}' '${path}'`);
  writeFileSync(
    join(dir, 'ldconfig'),
    ['#!/bin/sh', '# A stand-in for ldconfig -p: the CUDA libraries this server has.', `if [ "$1" = -p ]; then echo "${machine.cudaLibs.length + 250} libs found in cache \\\`/etc/ld.so.cache'"; ${cache.join('; ') || 'true'}; exit 0; fi`, 'exec /sbin/ldconfig "$@"', ''].join('\n'),
    { mode: 0o755 },
  );
  if (machine.arch) writeFileSync(join(dir, 'uname'), `#!/bin/sh\n# A stand-in for uname on an ${machine.arch} server.\nif [ "$1" = -sm ]; then echo "Linux ${machine.arch}"; else exec /bin/uname "$@"; fi\n`, { mode: 0o755 });
  return dir;
}
