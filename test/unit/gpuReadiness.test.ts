import { spawnSync } from 'node:child_process';
import { existsSync, mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, expect, test } from 'vitest';
import { decideGpuRuntime } from '../../engine/node/deploy/gpuRuntime.js';
import { gpuReadiness } from '../../engine/node/deploy/gpuReadiness.js';
import { judgeFacts } from '../../engine/node/deploy/ssh/preflightChecks.js';
import { DEVICE_PROBE_SCRIPT, parseProbeOutput, PROBE_SCRIPT, type ProbeFacts } from '../../engine/node/deploy/ssh/preflightProbe.js';
import { MACHINES, standInUuid, writeGpuStandIns, type StandInMachine } from '../support/gpuStandIns.js';

/**
 * The preflight's device probe, run by the real shell against stand-ins of what GPU servers print
 * (nvidia-smi, ldconfig -p, uname: test/support/gpuStandIns.ts), and the judgement of each server.
 */
const root = mkdtempSync(join(tmpdir(), 'shoal-gpu-standins-'));
afterAll(() => rmSync(root, { recursive: true, force: true }));

function probe(machine: StandInMachine | null, env: Record<string, string> = {}, script = DEVICE_PROBE_SCRIPT): ProbeFacts {
  const dir = machine ? writeGpuStandIns(mkdtempSync(join(root, 'bin-')), machine) : null;
  const run = spawnSync('sh', ['-s'], { input: script, encoding: 'utf8', env: { ...process.env, ...env, PATH: `${dir ? `${dir}:` : ''}${process.env.PATH}` } });
  expect(run.status).toBe(0);
  return parseProbeOutput(run.stdout);
}

describe('GPU servers as the preflight sees them', () => {
  test('8× A100 with CUDA 11.2 and cuDNN 8: every GPU with index and uuid, ready for tfjs-node-gpu', () => {
    const f = probe(MACHINES.dgxA100, {}, PROBE_SCRIPT);
    expect(f.complete).toBe(true);
    expect(f.gpus).toHaveLength(8);
    expect(f.gpus[7]).toEqual({ index: 7, name: 'NVIDIA A100-SXM4-80GB', memoryBytes: 81920 * 2 ** 20, uuid: standInUuid(7), driver: '535.104.05' });
    expect(f.cudaLibs).toEqual(expect.arrayContaining(['libcudart.so.11.0', 'libcublas.so.11', 'libcudnn.so.8']));
    expect(f.arch).toBe('x86_64');
    expect(f.cpus).toBeGreaterThan(0);
    expect(gpuReadiness(f)).toEqual({ kind: 'ready', summary: '8 GPUs, driver 535.104.05, CUDA 11.2 and cuDNN 8.1 libraries found' });
    const verdict = judgeFacts(f, 'me').find((v) => v.step === 'gpu')!;
    expect(verdict.status).toBe('ok');
    expect(verdict.detail).toContain(`7: NVIDIA A100-SXM4-80GB (80.0 GiB, ${standInUuid(7)})`);
    expect(decideGpuRuntime(f, { noGpu: false, allowCpuFallback: false })).toMatchObject({ install: true });
  });

  test('4× RTX 4090 beside 2× T4: six GPUs in nvidia-smi index order, two models', () => {
    const f = probe(MACHINES.rtx4090AndT4);
    expect(f.gpus.map((g) => `${g.index} ${g.name} ${g.memoryBytes / 2 ** 20}`)).toEqual([
      '0 NVIDIA GeForce RTX 4090 24564',
      '1 NVIDIA GeForce RTX 4090 24564',
      '2 NVIDIA GeForce RTX 4090 24564',
      '3 NVIDIA GeForce RTX 4090 24564',
      '4 Tesla T4 15360',
      '5 Tesla T4 15360',
    ]);
    expect(gpuReadiness(f).kind).toBe('ready');
  });

  test('no driver: nvidia-smi fails, one line says to install the driver, and the host is refused unless the CPU is allowed', () => {
    const f = probe(MACHINES.noDriver);
    expect(f.gpus).toEqual([]);
    expect(f.gpuError).toContain("couldn't communicate with the NVIDIA driver");
    const r = gpuReadiness(f);
    expect(r.kind).toBe('unusable');
    expect(r.kind === 'unusable' && r.line).toMatch(/^nvidia-smi is installed but fails \(NVIDIA-SMI has failed .*\): install or reload the NVIDIA driver/);
    expect(() => decideGpuRuntime(f, { noGpu: false, allowCpuFallback: false })).toThrow(/--allow-cpu-fallback/);
    expect(decideGpuRuntime(f, { noGpu: false, allowCpuFallback: true })).toMatchObject({ install: false, reason: expect.stringContaining('agents use the CPU (--allow-cpu-fallback)') });
  });

  test('CUDA 12 only: names the CUDA 11.2 and cuDNN 8.1 sonames missing, what was found, and what to install', () => {
    const f = probe(MACHINES.cuda12Only);
    const r = gpuReadiness(f);
    expect(r.kind === 'unusable' && r.line).toBe(
      '2 GPUs, but tfjs-node-gpu 4.22 (libtensorflow 2.9.1) needs CUDA 11.2 and cuDNN 8.1 and the loader finds no libcudart.so.11.0, libcublas.so.11, libcudnn.so.8 ' +
        '(found only libcublas.so.12, libcudart.so.12, libcudnn.so.9): install the CUDA 11.2 runtime (cuda-cudart-11-2 from NVIDIA\'s CUDA repository), cuBLAS for CUDA 11.2 (libcublas-11-2), ' +
        'cuDNN 8.1 (libcudnn8=8.1.1.*-1+cuda11.2) beside any newer CUDA, and make them visible to ldconfig or LD_LIBRARY_PATH.',
    );
    expect(judgeFacts(f, 'me').find((v) => v.step === 'gpu')).toMatchObject({ status: 'warn', detail: expect.stringContaining('--allow-cpu-fallback') });
  });

  test('libraries on LD_LIBRARY_PATH count as TensorFlow finds them there', () => {
    const libs = join(root, 'cuda-11.2-lib');
    mkdirSync(libs, { recursive: true });
    for (const name of ['libcudart.so.11.0', 'libcublas.so.11', 'libcudnn.so.8']) writeFileSync(join(libs, name), '');
    const f = probe({ ...MACHINES.dgxA100, cudaLibs: [] }, { LD_LIBRARY_PATH: `/nonexistent:${libs}` });
    expect(f.cudaLibs).toEqual(['libcublas.so.11', 'libcudart.so.11.0', 'libcudnn.so.8']);
    expect(gpuReadiness(f).kind).toBe('ready');
  });

  test('an arm64 server: tfjs-node-gpu has no build for it, said in one line', () => {
    const f = probe(MACHINES.arm64);
    expect(f.arch).toBe('aarch64');
    const r = gpuReadiness(f);
    expect(r.kind === 'unusable' && r.line).toBe('1 GPU on aarch64, but tfjs-node-gpu 4.22 ships libtensorflow 2.9.1 for linux-x86_64 only (no aarch64 build exists): use an x86_64 host for GPU training.');
  });

  test.runIf(!existsSync('/usr/bin/nvidia-smi'))('this machine (no nvidia-smi): a CPU host, nothing to refuse', () => {
    const f = probe(null);
    expect(gpuReadiness(f)).toEqual({ kind: 'no-gpu' });
    expect(decideGpuRuntime(f, { noGpu: false, allowCpuFallback: false })).toEqual({ install: false, reason: 'no GPU; agents use the CPU' });
  });
});
