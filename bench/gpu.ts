/**
 * GPU check, prepared for a machine with an NVIDIA GPU and the packages it needs already present:
 *
 *   npm run bench -- gpu [--steps 40]
 *
 * Installs nothing. First it says, one line each, every piece that is missing — nvidia-smi (or a
 * driver it can talk to), the @tensorflow/tfjs-node-gpu module, the CUDA 11.2 / cuDNN 8.1 libraries
 * libtensorflow 2.9.1 loads (engine/node/deploy/gpuReadiness.ts), an x86_64 Linux host — and exits 2
 * when any is. Otherwise, each a real `shoal deploy --cluster local` job on this machine:
 *  - `cnn` and a user model (test/support/userModels.ts's resnetBlock, as model.json + .npy data)
 *    on tfjs-node-gpu (one agent pinned to GPU 0) and on wasm (--no-gpu, SHOAL_BACKEND=wasm), each row
 *    with the measured step and the sum of the per-layer profile at the same batch;
 *  - 2 agents on one GPU (two one-agent jobs at once, both on GPU 0 with TF_FORCE_GPU_ALLOW_GROWTH):
 *    both must train, which they cannot when the first takes the GPU's memory.
 * Writes bench/results/gpu.json only when it ran.
 */
import { createRequire } from 'node:module';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { gpuReadiness, missingCudaLibs } from '../engine/node/deploy/gpuReadiness.js';
import { GPU_PACKAGE, TFJS_VERSION } from '../engine/node/deploy/gpuRuntime.js';
import { localShell } from '../engine/node/deploy/localShell.js';
import { DEVICE_PROBE_SCRIPT, parseProbeOutput } from '../engine/node/deploy/ssh/preflightProbe.js';
import type { JobEvent } from '../engine/protocol/events.js';
import { resnetBlock, saveLayersModel, writeNpyData } from '../test/support/userModels.js';
import { numberFlag } from './lib/args.js';
import { report, type Column } from './lib/report.js';

const STEPS = numberFlag('steps', 40);

/** Every missing piece, one line each; empty when the GPU path can run. */
async function missingPieces(): Promise<string[]> {
  const missing: string[] = [];
  const facts = parseProbeOutput((await localShell(DEVICE_PROBE_SCRIPT)).stdout);
  const gpu = gpuReadiness(facts);
  if (gpu.kind === 'no-gpu') missing.push('no nvidia-smi on the PATH: this machine has no NVIDIA driver (or GPU); install the driver so that nvidia-smi lists the GPUs.');
  else if (gpu.kind === 'unusable') missing.push(gpu.line);
  const libs = missingCudaLibs(facts);
  // Said on its own where the GPU line above did not already say it.
  if (libs.length > 0 && !(gpu.kind === 'unusable' && gpu.line.includes(libs[0].soname)))
    missing.push(`no ${libs.map((l) => l.soname).join(', ')} for the loader (ldconfig -p, LD_LIBRARY_PATH): install ${libs.map((l) => `${l.what} (${l.install})`).join(', ')}.`);
  try {
    createRequire(import.meta.url).resolve(GPU_PACKAGE);
  } catch {
    missing.push(`no ${GPU_PACKAGE} module: npm install ${GPU_PACKAGE}@${TFJS_VERSION} in this checkout (this script installs nothing).`);
  }
  return missing;
}

interface Row {
  workload: string;
  backend: string;
  device: string;
  samplesPerSec: number | null;
  stepMs: number | null;
  /** Sum of the per-layer profile (forward + backward) at the plan's micro-batch. */
  profileMs: number | null;
  note: string;
}

const io = (lines: string[]) => ({ out: (t: string) => void lines.push(...t.split('\n').filter(Boolean)), err: () => {}, interactive: false });

/** One local job; its agents' device, the steady samples/s (second half of the steps) and the profile's sum. */
async function job(workload: string, args: string[], env: Record<string, string>): Promise<Row> {
  const saved = { ...process.env };
  Object.assign(process.env, env);
  const lines: string[] = [];
  try {
    // Loaded only once every piece is there: the check itself needs none of the deploy machinery.
    const { runDeployCommand } = await import('../engine/node/commands/deploy.js');
    const code = await runDeployCommand(['--cluster', 'local', '--steps', String(STEPS), '--json', ...args], io(lines));
    const events = lines.map((l) => JSON.parse(l) as JobEvent);
    const agent = events.find((e): e is Extract<JobEvent, { type: 'agent' }> => e.type === 'agent');
    const steps = events.filter((e): e is Extract<JobEvent, { type: 'step' }> => e.type === 'step').slice(Math.floor(STEPS / 2));
    const sps = steps.length ? steps.reduce((s, e) => s + e.samplesPerSec, 0) / steps.length : null;
    const profile = events.find((e): e is Extract<JobEvent, { type: 'profile' }> => e.type === 'profile')?.profile;
    const batch = profile?.layers[0]?.batch;
    const profileMs = profile && batch !== undefined ? profile.layers.filter((l) => l.batch === batch).reduce((s, l) => s + l.forwardMs + l.backwardMs, 0) : null;
    const status = events.filter((e) => e.type === 'status').at(-1);
    return {
      workload,
      backend: agent?.backend ?? '—',
      device: agent?.device?.name ?? '—',
      samplesPerSec: sps,
      stepMs: sps && profile && batch ? (batch / sps) * 1000 : null,
      profileMs,
      note: code === 0 ? (agent?.device?.reason ?? '') : `exit ${code}: ${status && 'message' in status ? status.message : 'see the run folder'}`,
    };
  } finally {
    process.env = saved;
  }
}

async function main(): Promise<void> {
  const missing = await missingPieces();
  if (missing.length > 0) {
    console.log(`bench gpu: not run, ${missing.length} piece${missing.length === 1 ? '' : 's'} missing on this machine:`);
    for (const line of missing) console.log(`  - ${line}`);
    process.exit(2);
  }
  const root = mkdtempSync(join(tmpdir(), 'shoal-bench-gpu-'));
  try {
    const modelFile = await saveLayersModel(resnetBlock(), join(root, 'user'));
    writeNpyData(join(root, 'user', 'data'), { x: { shape: [8, 8, 2], kind: 'float' }, y: { shape: [], kind: { classes: 3 } } }, 4096, 1);
    const user = ['--model', modelFile, '--data', join(root, 'user', 'data'), '--plan', 'pp1-dp1'];
    const cnn = ['--model', 'cnn', '--plan', 'pp1-dp1'];
    const rows: Row[] = [];
    for (const [name, args] of [['cnn', cnn], ['user resnetBlock', user]] as const) {
      rows.push(await job(name, [...args], {}));
      rows.push(await job(name, [...args, '--no-gpu'], { SHOAL_BACKEND: 'wasm' }));
    }
    // Two jobs at once, each one agent on GPU 0: memory growth lets both allocate.
    const shared = await Promise.all([job('2 agents on GPU 0 (a)', [...cnn], {}), job('2 agents on GPU 0 (b)', [...cnn], {})]);
    rows.push(...shared);
    const num = (d: number) => (v: unknown) => (typeof v === 'number' ? v.toFixed(d) : '—');
    const columns: Column<Row>[] = [
      { key: 'workload', title: 'workload' },
      { key: 'backend', title: 'backend' },
      { key: 'device', title: 'device' },
      { key: 'samplesPerSec', title: 'samples/s', align: 'right', format: num(0) },
      { key: 'stepMs', title: 'step ms', align: 'right', format: num(2) },
      { key: 'profileMs', title: 'profile Σ ms', align: 'right', format: num(2) },
      { key: 'note', title: 'note' },
    ];
    report('gpu', 'GPU check: tfjs-node-gpu against wasm on this machine, and 2 agents on one GPU', rows, columns, [
      `${STEPS} steps per job; samples/s averaged over the second half. step ms = micro-batch / samples/s; profile Σ = the per-layer profile (forward + backward) at that batch.`,
    ]);
  } finally {
    rmSync(root, { recursive: true, force: true });
  }
}

main().catch((err) => {
  console.error(`bench gpu failed: ${(err as Error).stack ?? (err as Error).message}`);
  process.exit(1);
});
