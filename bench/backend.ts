/**
 * Backend benchmark: training throughput of one agent on the zoo `mlp` (784-512-256-10 ReLU, batch 64,
 * Adam 1e-3) on every tfjs backend that loads here, side by side with PyTorch on one CPU thread.
 *
 *   npm run bench -- backend [--steps N] [--warmup N] [--backends wasm,cpu]
 *
 * Rows per tfjs backend: Shoal's stage executor holding every layer (the real single-agent workload) and a plain tfjs
 * loop (tf.train.adam minimising the same loss), so Shoal's own overheads are visible, not hidden.
 */
import * as tf from '@tensorflow/tfjs-core';
import '@tensorflow/tfjs-core/dist/register_all_gradients';
import { spawnSync } from 'node:child_process';
import { existsSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { selectBackend, type BackendName } from '../agents/backend/selectBackend.js';
import { installTransposedMatMulWasm, uninstallTransposedMatMulWasm } from '../agents/backend/transposedMatMulWasm.js';
import { gatherBatch, loadMnist, type MnistData } from '../agents/data/mnist.js';
import { globalBatchIndices } from '../engine/data/dataOrder.js';
import { zooModel } from '../engine/model/zoo.js';
import { presetPlan } from '../engine/plan/presets.js';
import { StageTrainer } from '../test/support/stageTrainer.js';
import { runPeer } from './lib/peer.js';
import { report, type Column } from './lib/report.js';

const BATCH = 64;
const SEED = 42;
const LAYERS = [784, 512, 256, 10];
const ALL_BACKENDS: BackendName[] = ['tensorflow-gpu', 'tensorflow', 'wasm', 'cpu'];
/** Timed steps per backend: enough for a few seconds each on a 2-core dev machine. */
const DEFAULT_STEPS: Record<BackendName, number> = { 'tensorflow-gpu': 300, tensorflow: 200, wasm: 100, cpu: 20 };
const TORCH_PEER = join(dirname(fileURLToPath(import.meta.url)), 'peers/torch_mlp.py');

interface Row {
  system: string;
  backend: string;
  workload: string;
  threads: number | null;
  steps: number | null;
  samplesPerSec: number | null;
  stepMs: number | null;
  matMulsPerStep: number | null;
  gflops: number | null;
  extraWork: string;
  blas?: string;
  blasLibraries?: string[];
  error?: string;
}

const args = process.argv.slice(2);
const flag = (name: string) => {
  const i = args.indexOf(`--${name}`);
  return i >= 0 ? args[i + 1] : undefined;
};
const stepsOverride = flag('steps') ? Number(flag('steps')) : undefined;
const warmup = Number(flag('warmup') ?? 5);

/** Matrix-product FLOPs of one training step: forward, weight gradients, input gradients of layers 2..L, and optionally layer 1's. */
function stepFlops(withInputGrad: boolean): number {
  let macs = 0;
  for (let l = 0; l + 1 < LAYERS.length; l++) {
    const m = BATCH * LAYERS[l] * LAYERS[l + 1];
    macs += 2 * m + (l > 0 || withInputGrad ? m : 0);
  }
  return 2 * macs;
}

/** A plain tfjs training loop on the same model, data order and loss: no stages, no input gradient. */
function plainTrainer(data: MnistData): { step(): Promise<number>; dispose(): void } {
  const vars: tf.Variable[] = [];
  for (let l = 0; l + 1 < LAYERS.length; l++) {
    const limit = Math.sqrt(6 / (LAYERS[l] + LAYERS[l + 1]));
    vars.push(tf.variable(tf.randomUniform([LAYERS[l], LAYERS[l + 1]], -limit, limit, 'float32', SEED + l)));
    vars.push(tf.variable(tf.zeros([LAYERS[l + 1]])));
  }
  const optimizer = tf.train.adam(1e-3, 0.9, 0.999, 1e-7);
  const forward = (x: tf.Tensor) => {
    let h = x;
    for (let l = 0; l < vars.length; l += 2) {
      h = tf.add(tf.matMul(h as tf.Tensor2D, vars[l] as tf.Tensor2D), vars[l + 1]);
      if (l + 2 < vars.length) h = tf.relu(h);
    }
    return h;
  };
  let stepNo = 0;
  return {
    async step() {
      const batch = gatherBatch(data.train, globalBatchIndices(SEED, stepNo++, BATCH, data.train.size));
      const x = tf.tensor2d(batch.images, [BATCH, 784]);
      const y = tf.tidy(() => tf.oneHot(tf.tensor1d(batch.labels, 'int32'), 10));
      const cost = optimizer.minimize(() => tf.losses.softmaxCrossEntropy(y, forward(x)) as tf.Scalar, true, vars) as tf.Scalar;
      const loss = cost.dataSync()[0]; // read back every step, as the agents do
      tf.dispose([x, y, cost]);
      return loss;
    },
    dispose() {
      tf.dispose(vars);
      optimizer.dispose();
    },
  };
}

async function timeWorkload(step: () => Promise<number>, steps: number): Promise<{ seconds: number; matMuls: number }> {
  for (let i = 0; i < warmup; i++) await step();
  const started = performance.now();
  for (let i = 0; i < steps; i++) await step();
  const seconds = (performance.now() - started) / 1000;
  // One extra, profiled step: counts the matrix products the step really runs (recompute would show here).
  const profile = await tf.profile(() => step());
  const matMuls = profile.kernels.filter((k) => k.name === 'BatchMatMul' || k.name === '_FusedMatMul').length;
  return { seconds, matMuls };
}

async function benchTfjs(name: BackendName, data: MnistData): Promise<Row[]> {
  const base = { system: 'tfjs 4.22', backend: name, threads: name === 'wasm' || name === 'cpu' ? 1 : null };
  const empty = { steps: null, samplesPerSec: null, stepMs: null, matMulsPerStep: null, gflops: null, extraWork: '' };
  let chosen;
  try {
    chosen = await selectBackend({ prefer: [name] });
  } catch (err) {
    return [{ ...base, ...empty, workload: '—', error: (err as Error).message.replace(/^.*skipped: /, '').replace(/\)\.$/, '') }];
  }
  const steps = stepsOverride ?? DEFAULT_STEPS[chosen.name];
  const model = zooModel('mlp');
  const trainer = await StageTrainer.create(model, presetPlan(model, 'pp1-dp1', { globalBatch: BATCH, seed: SEED }), data);
  const plain = plainTrainer(data);
  const rows: Row[] = [];
  const shoalStep = () => trainer.trainStep();
  const workloads: { workload: string; step: () => Promise<number>; inputGrad: boolean; extraWork: string; stockMatMul?: boolean }[] = [
    { workload: 'Shoal stage executor', step: shoalStep, inputGrad: false, extraWork: 'Shoal Adam [2]' },
    { workload: 'plain tf.train.adam loop', step: () => plain.step(), inputGrad: false, extraWork: 'none' },
  ];
  if (chosen.name === 'wasm') {
    // What Shoal's transposed-matMul fast path buys on wasm, measured rather than claimed [5].
    workloads.push({ workload: 'Shoal stage executor, stock matMul', step: shoalStep, inputGrad: false, extraWork: 'Shoal Adam [2][5]', stockMatMul: true });
  }
  for (const w of workloads) {
    const swapped = w.stockMatMul === true && uninstallTransposedMatMulWasm();
    const { seconds, matMuls } = await timeWorkload(w.step, steps).finally(() => swapped && installTransposedMatMulWasm());
    rows.push({
      ...base,
      backend: chosen.name,
      workload: w.workload,
      steps,
      samplesPerSec: (steps * BATCH) / seconds,
      stepMs: (seconds / steps) * 1000,
      matMulsPerStep: matMuls,
      gflops: (stepFlops(w.inputGrad) * steps) / seconds / 1e9,
      extraWork: w.extraWork,
    });
  }
  trainer.dispose();
  plain.dispose();
  return rows;
}

/** The libblas.so.3 alternative Debian has active (what torch links unless LD_LIBRARY_PATH overrides it). */
function activeBlasAlternative(): string {
  const res = spawnSync('update-alternatives', ['--query', 'libblas.so.3-x86_64-linux-gnu'], { encoding: 'utf8' });
  return /^Value: (.*)$/m.exec(res.stdout ?? '')?.[1] ?? 'unknown (update-alternatives gave no answer)';
}

function torchRow(label: string, env: Record<string, string>): Row {
  const steps = stepsOverride ?? 100;
  // One thread everywhere torch could spawn more: intra-op pool, OpenMP, OpenBLAS's own pool.
  const oneThread = { OMP_NUM_THREADS: '1', OPENBLAS_NUM_THREADS: '1', MKL_NUM_THREADS: '1', ...env };
  const r = runPeer(TORCH_PEER, ['--steps', String(steps), '--warmup', String(warmup), '--batch', String(BATCH), '--threads', '1'], { env: oneThread });
  const blas = r.blas as { kind?: string; library?: string[] | null } | undefined;
  const base = { system: `pytorch ${r.version ?? ''}`.trim(), backend: `cpu, ${label}`, workload: 'torch.nn + optim.Adam', extraWork: 'none' };
  if (r.error) {
    return { ...base, threads: 1, steps: null, samplesPerSec: null, stepMs: null, matMulsPerStep: null, gflops: null, error: r.error };
  }
  const samplesPerSec = r.samplesPerSec as number;
  return {
    ...base,
    threads: r.threads as number,
    steps,
    samplesPerSec,
    stepMs: r.stepMs as number,
    matMulsPerStep: null,
    gflops: (stepFlops(false) * samplesPerSec) / BATCH / 1e9,
    blas: `${blas?.kind ?? '?'} (${(blas?.library ?? []).map((p) => p.split('/').pop()).join(', ')})`,
    blasLibraries: blas?.library ?? [],
  };
}

/** OpenBLAS builds of libblas.so.3 that can be tried without touching the system's alternative. */
function openBlasDirs(): string[] {
  const dirs = [process.env.SHOAL_OPENBLAS_DIR, '/usr/lib/x86_64-linux-gnu/openblas-pthread'].filter(Boolean) as string[];
  return dirs.filter((d) => existsSync(join(d, 'libblas.so.3')));
}

async function main(): Promise<void> {
  const forced = process.env.SHOAL_BACKEND;
  const backends = flag('backends')?.split(',') ?? (forced ? [forced] : ALL_BACKENDS);
  const data = loadMnist();
  const rows: Row[] = [];
  for (const name of backends) {
    // tfjs-node and tfjs-node-gpu share the backend name 'tensorflow': one process can hold only one.
    if (name === 'tensorflow' && rows.some((r) => r.backend === 'tensorflow-gpu' && !r.error)) continue;
    console.error(`bench backend: ${name} ...`);
    rows.push(...(await benchTfjs(name as BackendName, data)));
  }
  console.error('bench backend: pytorch ...');
  const alternative = activeBlasAlternative();
  const torch = torchRow('system libblas', {});
  rows.push(torch);
  if (!torch.error && !torch.blas?.startsWith('OpenBLAS')) {
    for (const dir of openBlasDirs()) rows.push(torchRow('OpenBLAS', { LD_LIBRARY_PATH: dir }));
  }

  const shoal = rows.find((r) => r.workload.startsWith('Shoal') && r.matMulsPerStep !== null);
  const plain = rows.find((r) => r.workload.startsWith('plain') && r.matMulsPerStep !== null);
  const notes = [
    'Threads: tfjs wasm is single-threaded in Node and tfjs cpu is pure JS, so both use one core; PyTorch is pinned to one ' +
      'thread (torch.set_num_threads(1), OMP/OPENBLAS/MKL_NUM_THREADS=1). Warm-up steps excluded; every step reads the loss back.',
    'Recompute: the single stage runs forward, loss and backward as one tape, so the forward runs once per step ' +
      `(profiled: ${shoal?.matMulsPerStep ?? '?'} matMuls/step vs ${plain?.matMulsPerStep ?? '?'} for the plain loop; a recompute ` +
      'would add 3). Its real extra work: gradient accumulation buffers over micro-batches, and ' +
      "Shoal's Adam written as small tf ops.",
    `GFLOP/s = matMul FLOPs of a step (${(stepFlops(false) / 1e6).toFixed(0)} MFLOP, ${(stepFlops(true) / 1e6).toFixed(0)} with input grad) / step time; element-wise ops not counted.`,
    `PyTorch BLAS: the library mapped into the peer process is in the row; Debian's active libblas.so.3 alternative is ${alternative}. ` +
      'The OpenBLAS row (when present) loads an OpenBLAS libblas.so.3 via LD_LIBRARY_PATH without changing the system alternative ' +
      '(SHOAL_OPENBLAS_DIR or /usr/lib/x86_64-linux-gnu/openblas-pthread).',
    'wasm: Shoal replaces tfjs 4.22\'s slow transposed BatchMatMul on wasm (used by every dense backward) with an explicit ' +
      'transpose + XNNPACK product (agents/backend/transposedMatMulWasm.ts). The "stock matMul" row is the same Shoal ' +
      'workload with tfjs\'s own kernel, measured in the same run.',
    'Data: tfjs rows gather each batch from bundled MNIST (8000 digits) in the plan order; torch gathers from an 8000-sample ' +
      'synthetic pool (throughput does not depend on the digits).',
  ];
  const columns: Column<Row>[] = [
    { key: 'system', title: 'system' },
    { key: 'backend', title: 'backend' },
    { key: 'workload', title: 'workload' },
    { key: 'threads', title: 'thr', align: 'right' },
    { key: 'steps', title: 'steps', align: 'right' },
    { key: 'samplesPerSec', title: 'samples/s', align: 'right', format: (v) => (typeof v === 'number' ? v.toFixed(0) : '—') },
    { key: 'stepMs', title: 'ms/step', align: 'right', format: (v) => (typeof v === 'number' ? v.toFixed(2) : '—') },
    { key: 'matMulsPerStep', title: 'matMul/step', align: 'right' },
    { key: 'gflops', title: 'GFLOP/s', align: 'right', format: (v) => (typeof v === 'number' ? v.toFixed(1) : '—') },
    { key: 'extraWork', title: 'extra work' },
    { key: 'error', title: 'note', format: (_v, r) => r.error ?? r.blas ?? '' },
  ];
  report('backend', `Backend benchmark: mlp 784-512-256-10, batch ${BATCH}, Adam 1e-3, one agent`, rows, columns, notes, {
    config: { model: 'mlp', batch: BATCH, warmup, seed: SEED },
  });
}

main().catch((err) => {
  console.error(`bench backend failed: ${(err as Error).message}`);
  process.exit(1);
});
