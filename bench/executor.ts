/**
 * Executor benchmark: training throughput of Shoal's executor (GraphStage over tfjs-layers' layers)
 * against tfjs's own `model.fit` on the same model, in one process on the wasm backend, and against
 * PyTorch on OpenBLAS interleaved with them on the same core (one thread each), with that core's
 * ceilings (torch.mm and wasm matMul FLOP/s). Target: Shoal ≥ 1.0× model.fit on every model, the
 * three built-ins included.
 *
 *   npm run bench -- executor [--seconds 4] [--batches 16]
 *
 * Models: test/support/userModels.ts's resnetBlock, biLstmClassifier and twoInTwoOut, and an MLP
 * 784-256-128-10 (functional tfjs-layers model). Each is saved as model.json + weights.bin with .npy
 * data (test/support/userModels.ts), then:
 *  - Shoal: what one agent does per step on a one-stage plan (pp1-dp1, stage = every layer): the rows
 *    gathered from the NumPy folder and packed as the agent packs them (dataset.train.gather over the
 *    model's inputs / targets, in file order like fit's shuffle: false), GraphStage.lossBackward on the
 *    whole batch (forward, loss and backward in one tape, loss read back), takeGradients, Shoal's SGD
 *    (lr 0.01) apply, and the batch-norm statistics update. A second Shoal column hands the gradients
 *    to the update as a synchronous agent does (GradientSync over a group of one: gradReady, finish).
 *  - tfjs: the same model.json loaded with tfl.loadLayersModel, compiled with the same loss(es) and
 *    tf.train.sgd(0.01), `model.fit(xs, ys, { batchSize, epochs: 1, shuffle: false, verbose: 0 })`
 *    over the same samples, already in tensors.
 *  - PyTorch (bench/peers/torch_executor.py --serve, bench/lib/torchPeer.ts): the MLP and the ResNet
 *    block, same shapes, batch and SGD, one turn per round; refused on the reference BLAS.
 * Every workload runs one warm-up epoch (not counted); then epochs of the three tfjs workloads
 * alternate, so a slow patch of the machine hits them alike, until each has run about --seconds.
 */
import { execFileSync } from 'node:child_process';
import { mkdtempSync, rmSync } from 'node:fs';
import { cpus, loadavg, tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { selectBackend } from '../agents/backend/selectBackend.js';
import { ProcessGroup } from '../agents/comm/processGroup.js';
import type { Dataset } from '../engine/wire/data/dataset.js';
import { openNpy } from '../engine/wire/data/npy.js';
import { openDataset } from '../agents/data/openDataset.js';
import { buildGraphStage } from '../agents/exec/graph/buildGraphStage.js';
import { buildLayersModel } from '../agents/exec/graph/layersModel.js';
import { kerasTopology } from '../engine/model/export/kerasTopology.js';
import { zooModel } from '../engine/model/zoo.js';
import type { GraphStage } from '../agents/exec/graph/graphStage.js';
import { GradientSync } from '../agents/exec/gradientSync.js';
import { createOptimizer, type Optimizer } from '../agents/exec/optimizer.js';
import { globalBatchIndices } from '../engine/data/dataOrder.js';
import type { ModelGraph } from '../engine/model/graph.js';
import { trainingSpecFor, type OutputLoss } from '../engine/model/trainingSpec.js';
import { loadModel, modelDocument } from '../engine/node/modelRef.js';
import { parsePlan, type OptimizerConfig, type Plan } from '../engine/plan/plan.js';
import { presetPlan } from '../engine/plan/presets.js';
import { biLstmClassifier, loadLayersModel, resnetBlock, saveLayersModel, tf, tfl, twoInTwoOut, writeNpyData } from '../test/support/userModels.js';
import { numberFlag } from './lib/args.js';
import { TorchPeer } from './lib/torchPeer.js';
import { report, type Column } from './lib/report.js';

const SEED = 7;
const LR = 0.01;
const TARGET = 1.0;
/** Seconds of timed training per workload and model (warm-up not counted). */
const SECONDS = numberFlag('seconds', 4);
/** Batches per epoch: the data set holds this many batches; fit runs one epoch per call. */
const BATCHES = numberFlag('batches', 16);
const TORCH_PEER = join(dirname(fileURLToPath(import.meta.url)), 'peers/torch_executor.py');
const SGD: OptimizerConfig = { kind: 'sgd', learningRate: LR, momentum: 0, nesterov: false };

type ArraysSpec = Parameters<typeof writeNpyData>[1];

interface Case {
  model: string;
  describe: string;
  build: () => tfl.LayersModel | Promise<tfl.LayersModel>;
  batch: number;
  /** .npy files: x/y for one input and output, else one per input and output layer. */
  arrays: ArraysSpec;
  torch: string | null;
}

/** MLP 784-256-128-10 as a functional model (ReLU, softmax head). */
function mlp(): tfl.LayersModel {
  const input = tfl.input({ shape: [784], name: 'pixels' });
  const h1 = tfl.layers.dense({ units: 256, activation: 'relu', name: 'hidden1' }).apply(input) as tfl.SymbolicTensor;
  const h2 = tfl.layers.dense({ units: 128, activation: 'relu', name: 'hidden2' }).apply(h1) as tfl.SymbolicTensor;
  const out = tfl.layers.dense({ units: 10, activation: 'softmax', name: 'probs' }).apply(h2) as tfl.SymbolicTensor;
  return tfl.model({ inputs: input, outputs: out, name: 'mlp' });
}

/** A built-in model as the agents build it: the Keras topology `shoal export` writes, built by tfjs-layers (seeded). */
const builtIn = (name: string) => () => buildLayersModel(kerasTopology(zooModel(name), 'bench').topology, SEED);
const mnistArrays = (name: string): ArraysSpec => ({ x: { shape: zooModel(name).layers[0].outputShape, kind: 'float' }, y: { shape: [], kind: { classes: zooModel(name).layers.at(-1)!.outputShape.at(-1)! } } });

const CASES: Case[] = [
  { model: 'builtin:mlp', describe: 'built-in mlp 784-512-256-10, logits', build: builtIn('mlp'), batch: 64, arrays: mnistArrays('mlp'), torch: null },
  { model: 'builtin:mlp-wide', describe: 'built-in mlp-wide 784-512-10000, logits', build: builtIn('mlp-wide'), batch: 64, arrays: mnistArrays('mlp-wide'), torch: null },
  { model: 'builtin:cnn', describe: 'built-in cnn, 2 conv + 2 dense, 28×28×1', build: builtIn('cnn'), batch: 64, arrays: mnistArrays('cnn'), torch: null },
  { model: 'mlp', describe: '784-256-128-10, softmax', build: mlp, batch: 64, arrays: { x: { shape: [784], kind: 'float' }, y: { shape: [], kind: { classes: 10 } } }, torch: 'mlp' },
  { model: 'resnetBlock', describe: 'conv-bn-relu-conv+skip, 8×8×2', build: resnetBlock, batch: 64, arrays: { x: { shape: [8, 8, 2], kind: 'float' }, y: { shape: [], kind: { classes: 3 } } }, torch: 'resnet' },
  { model: 'biLstmClassifier', describe: 'embed 20×5, BiLSTM 4, 6 tokens', build: biLstmClassifier, batch: 32, arrays: { x: { shape: [6], kind: { classes: 20 } }, y: { shape: [], kind: { classes: 2 } } }, torch: null },
  {
    model: 'twoInTwoOut',
    describe: '2 inputs, shared dense ×2, dropout, 2 heads',
    build: twoInTwoOut,
    batch: 64,
    arrays: { a: { shape: [5], kind: 'float' }, b: { shape: [3], kind: 'float' }, cls: { shape: [], kind: { classes: 3 } }, reg: { shape: [1], kind: 'float' } },
    torch: null,
  },
];

interface Breakdown {
  /** dataset.train.gather of inputs and targets, and the input tensor. */
  gatherMs: number;
  /** GraphStage.lossBackward: forward, loss, backward (one tape), loss read back. */
  lossBackwardMs: number;
  /** takeGradients and the optimizer (or GradientSync: gradReady + finish). */
  updateMs: number;
  /** Batch-norm moving statistics (sums and apply). */
  batchNormMs: number;
}

interface Row {
  model: string;
  describe: string;
  batch: number;
  params: number;
  shoalSamplesPerSec: number | null;
  shoalAgentSamplesPerSec: number | null;
  tfjsFitSamplesPerSec: number | null;
  torchSamplesPerSec: number | null;
  /** Shoal / model.fit. */
  ratio: number | null;
  /** Median over rounds of fit's epoch time / Shoal's epoch time in the same round. */
  pairedMedianRatio: number | null;
  /** Shoal with GradientSync / model.fit. */
  agentRatio: number | null;
  meetsTarget: boolean | null;
  shoalSteps: number;
  fitSteps: number;
  shoalStepMs: number | null;
  fitStepMs: number | null;
  /** Shoal's step split into its parts (ms per step, the plain-optimizer workload). */
  shoalBreakdown: Breakdown | null;
  /** Kernels run per training step, and their summed time (tf.profile). */
  shoalKernelsPerStep: number | null;
  fitKernelsPerStep: number | null;
  shoalKernelMsPerStep: number | null;
  fitKernelMsPerStep: number | null;
  /** The kernels whose per-step count differs most between Shoal and fit (Shoal − fit). */
  kernelDiff: string;
  /** Shoal / PyTorch, samples/s, interleaved on the same core. */
  shoalOverTorch: number | null;
  torchNote: string;
  /** What the peer ran on: version, threads, BLAS (built with, libblas.so.3 alternative, mapped, OpenBLAS core), kernel. */
  torchPeer: Record<string, unknown> | null;
  error?: string;
}

/** The loss tfjs-layers' fit minimises for one output: Keras's, the same Shoal computes (agents/exec/losses.ts). */
function fitLoss(loss: OutputLoss): string | ((yTrue: tf.Tensor, yPred: tf.Tensor) => tf.Tensor) {
  if (loss.loss === 'sparseCategoricalCrossentropy' && loss.fromLogits) {
    // tfjs-layers' string losses take probabilities only, and it lets only its own sparse loss have class-index
    // targets: from logits, TensorFlow's softmax cross-entropy on one-hot targets (made once, before timing).
    return (yTrue, yPred) => tf.losses.softmaxCrossEntropy(yTrue, yPred);
  }
  if (loss.fromLogits && loss.loss !== 'meanSquaredError' && loss.loss !== 'meanAbsoluteError') throw new Error(`bench executor: no fit loss for ${loss.loss} from logits`);
  return loss.loss;
}

/** The first `n` samples of a .npy file as a tensor (what fit trains on, in file order). */
function npyTensor(file: string, n: number): tf.Tensor {
  const a = openNpy(file);
  const out = new Float32Array(n * a.rowSize);
  a.readRange(0, n, out);
  a.close();
  return tf.tensor(out, [n, ...a.shape.slice(1)]);
}

interface Workload {
  name: string;
  /** One epoch (BATCHES steps of `batch` samples); returns its seconds. */
  epoch(): Promise<number>;
  /** One profiled epoch: kernels by name, count and time per step. */
  profile(): Promise<Map<string, { count: number; ms: number }>>;
  seconds: number;
  steps: number;
  /** Seconds of each timed epoch, in round order. */
  epochs: number[];
}

/** Read at once: tf.profile hands back one shared object, which the next profile overwrites. */
function kernelsOf(info: Awaited<ReturnType<typeof tf.profile>>, perStep: number): Map<string, { count: number; ms: number }> {
  const out = new Map<string, { count: number; ms: number }>();
  for (const k of info.kernels) {
    const e = out.get(k.name) ?? { count: 0, ms: 0 };
    e.count += 1 / perStep;
    e.ms += (typeof k.kernelTimeMs === 'number' ? k.kernelTimeMs : 0) / perStep;
    out.set(k.name, e);
  }
  return out;
}

/** Shoal's per-step work as one agent runs it; `agent` routes the update through GradientSync. */
function shoalWorkload(name: string, stage: GraphStage, plan: Plan, dataset: Dataset, feeds: { inputs: string[]; targets: string[] }, batch: number, agent: boolean, breakdown: Breakdown): Workload {
  const optimizer: Optimizer | null = agent ? null : createOptimizer(plan.optimizer);
  const sync = agent ? new GradientSync({ group: new ProcessGroup(0, [0], new Map(), { name: 'bench group of one' }), params: stage.params, zero: 0, optimizer: plan.optimizer }) : null;
  let step = 0;
  const trainStep = async (timed: boolean) => {
    const t0 = performance.now();
    const samples = globalBatchIndices(plan.seed, step, batch, dataset.train.size, plan.shuffle);
    stage.setPass({ seed: plan.seed, step, samples });
    const x = tf.tensor(dataset.train.gather(feeds.inputs, samples), [batch, ...stage.inputShape]);
    const targets = dataset.train.gather(feeds.targets, samples);
    const t1 = performance.now();
    const { dx } = await stage.lossBackward(x, targets, batch, plan.globalBatch);
    dx?.dispose();
    x.dispose();
    const t2 = performance.now();
    const grads = stage.takeGradients();
    if (sync) {
      sync.beginStep(step);
      grads.forEach((g, k) => sync.gradReady(k, g));
      await sync.finish(step);
    } else optimizer!.apply(stage.params, grads);
    const t3 = performance.now();
    if (stage.batchNorm.size > 0) stage.batchNorm.apply(stage.batchNorm.sums());
    const t4 = performance.now();
    if (timed) {
      breakdown.gatherMs += t1 - t0;
      breakdown.lossBackwardMs += t2 - t1;
      breakdown.updateMs += t3 - t2;
      breakdown.batchNormMs += t4 - t3;
    }
    step++;
  };
  let warm = false;
  return {
    name,
    seconds: 0,
    steps: 0,
    epochs: [],
    async epoch() {
      const timed = warm;
      warm = true;
      const started = performance.now();
      for (let i = 0; i < BATCHES; i++) await trainStep(timed);
      return (performance.now() - started) / 1000;
    },
    async profile() {
      const info = await tf.profile(async () => {
        for (let i = 0; i < BATCHES; i++) await trainStep(false);
        return tf.scalar(0);
      });
      return kernelsOf(info, BATCHES);
    },
  };
}

function fitWorkload(model: tfl.LayersModel, xs: tf.Tensor[], ys: tf.Tensor[], batch: number): Workload {
  const fit = () => model.fit(xs.length === 1 ? xs[0] : xs, ys.length === 1 ? ys[0] : ys, { batchSize: batch, epochs: 1, shuffle: false, verbose: 0 });
  return {
    name: 'fit',
    seconds: 0,
    steps: 0,
    epochs: [],
    async epoch() {
      const started = performance.now();
      await fit();
      return (performance.now() - started) / 1000;
    },
    async profile() {
      return kernelsOf(await tf.profile(() => fit().then(() => tf.scalar(0))), BATCHES);
    },
  };
}

/** "pytorch 1.13, 1 thread, OpenBLAS Zen (openblas-pthread), 1,234 steps". */
function describePeer(peer: TorchPeer, steps: number): string {
  const f = peer.facts as { version?: string; threads?: number; blas?: { alternative?: string; openblasCore?: string | null } };
  const blas = f.blas?.openblasCore ? `OpenBLAS ${f.blas.openblasCore}` : (f.blas?.alternative ?? 'BLAS unknown');
  return `pytorch ${f.version}, ${f.threads} thread, ${blas}, ${steps} steps${peer.removedEnv.length ? `, without ${peer.removedEnv.join(', ')}` : ''}`;
}

/** Per-step kernel count and time, and the kernel names whose counts differ most (a − b). */
function compareKernels(a: Map<string, { count: number; ms: number }>, b: Map<string, { count: number; ms: number }>): string {
  const names = new Set([...a.keys(), ...b.keys()]);
  const diffs = [...names]
    .map((n) => ({ n, d: (a.get(n)?.count ?? 0) - (b.get(n)?.count ?? 0) }))
    .filter((e) => Math.abs(e.d) >= 0.5)
    .sort((x, y) => Math.abs(y.d) - Math.abs(x.d));
  return diffs.slice(0, 5).map((e) => `${e.n} ${e.d > 0 ? '+' : ''}${Math.round(e.d)}`).join(', ');
}

function median(values: number[]): number | null {
  if (values.length === 0) return null;
  const sorted = [...values].sort((a, b) => a - b);
  const mid = sorted.length >> 1;
  return sorted.length % 2 ? sorted[mid] : (sorted[mid - 1] + sorted[mid]) / 2;
}

const total = (m: Map<string, { count: number; ms: number }>, key: 'count' | 'ms') => [...m.values()].reduce((s, e) => s + e[key], 0);

async function benchCase(c: Case, root: string): Promise<Row> {
  const dir = join(root, c.model.replace(/[^\w-]/g, '_'));
  const modelFile = await saveLayersModel(await c.build(), dir);
  const samples = BATCHES * c.batch;
  writeNpyData(join(dir, 'data'), c.arrays, samples, 1);
  const graph: ModelGraph = loadModel(modelFile);
  const spec = trainingSpecFor(graph, modelDocument(graph), {});
  const losses = spec.outputs;
  const base = presetPlan(graph, 'pp1-dp1', { globalBatch: c.batch, microBatches: 1, seed: SEED, optimizer: SGD });
  // One stage over every layer, data in file order (fit's shuffle: false).
  const plan = parsePlan({ ...base, model: modelFile, stages: [{ ...base.stages[0], layers: graph.layers.map((l) => l.id) }], shuffle: false });
  const dataset = await openDataset({ kind: 'npy', dir: join(dir, 'data') }, graph, losses, plan.seed);
  const feeds = { inputs: graph.layers.filter((l) => l.spec.kind === 'input').map((l) => l.id), targets: losses.map((l) => l.output) };
  const stage = await buildGraphStage(graph, plan, 0, losses);
  const agentStage = await buildGraphStage(graph, plan, 0, losses);

  // tfjs-layers' own training on the same file, data and losses.
  const loaded = await loadLayersModel(modelFile);
  // A Sequential file (the built-ins' topology) loads with no output names: fit the same layers as a functional model.
  const model = loaded instanceof tfl.Sequential ? tfl.model({ inputs: loaded.inputs, outputs: loaded.outputs, name: loaded.name }) : loaded;
  const byId = new Map(graph.layers.map((l) => [l.id, l]));
  const classesOf = (id: string) => byId.get(id)!.outputShape.at(-1)!;
  const outputNames = model.outputNames;
  const fitLosses = outputNames.map((name) => {
    const l = losses.find((o) => o.output === name);
    if (!l) throw new Error(`bench executor: output ${name} has no loss in the training spec`);
    return fitLoss(l);
  });
  model.compile({ optimizer: tf.train.sgd(LR), loss: (fitLosses.length === 1 ? fitLosses[0] : fitLosses) as tfl.ModelCompileArgs['loss'] });
  const single = Object.keys(c.arrays).length === 2 && 'x' in c.arrays;
  const file = (name: string) => join(dir, 'data', `${name}.npy`);
  const xs = model.inputNames.map((name) => npyTensor(file(single ? 'x' : name), samples));
  const ys = outputNames.map((name) => {
    const y = npyTensor(file(single ? 'y' : name), samples);
    const l = losses.find((o) => o.output === name)!;
    if (l.loss !== 'sparseCategoricalCrossentropy' || !l.fromLogits) return y;
    const oneHot = tf.tidy(() => tf.cast(tf.oneHot(tf.cast(tf.reshape(y, [-1]), 'int32') as tf.Tensor1D, classesOf(name)), 'float32'));
    y.dispose();
    return oneHot;
  });

  const shoalParts: Breakdown = { gatherMs: 0, lossBackwardMs: 0, updateMs: 0, batchNormMs: 0 };
  const workloads = [
    shoalWorkload('shoal', stage, plan, dataset, feeds, c.batch, false, shoalParts),
    shoalWorkload('shoal-agent', agentStage, plan, dataset, feeds, c.batch, true, { gatherMs: 0, lossBackwardMs: 0, updateMs: 0, batchNormMs: 0 }),
    fitWorkload(model, xs, ys, c.batch),
  ];
  // The PyTorch peer starts (and warms up) first, then takes its turn in every round on the same core.
  const peer = c.torch ? await TorchPeer.start(TORCH_PEER, ['--model', c.torch, '--batch', String(c.batch), '--batches', String(BATCHES), '--lr', String(LR)]) : null;
  const torch = { steps: 0, seconds: 0 };
  // Warm-up epoch each (kernels, tfjs-layers' first-call set-up), then alternate until each has its seconds.
  for (const w of workloads) await w.epoch();
  try {
    while (workloads.some((w) => w.seconds < SECONDS) || (peer instanceof TorchPeer && torch.seconds < SECONDS)) {
      for (const w of workloads) {
        if (w.seconds >= SECONDS) continue;
        const seconds = await w.epoch();
        w.epochs.push(seconds);
        w.seconds += seconds;
        w.steps += BATCHES;
      }
      if (peer instanceof TorchPeer && torch.seconds < SECONDS) {
        const turn = await peer.run(Math.min(1, Math.max(0.2, workloads[0].epochs.at(-1) ?? 0.5)));
        torch.steps += turn.steps;
        torch.seconds += turn.seconds;
      }
    }
  } finally {
    if (peer instanceof TorchPeer) peer.close();
  }
  const [shoal, agent, fit] = workloads;
  const sps = (w: Workload) => (w.steps * c.batch) / w.seconds;
  const shoalKernels = await shoal.profile();
  const fitKernels = await fit.profile();
  const perStep = (b: Breakdown): Breakdown => ({
    gatherMs: b.gatherMs / shoal.steps,
    lossBackwardMs: b.lossBackwardMs / shoal.steps,
    updateMs: b.updateMs / shoal.steps,
    batchNormMs: b.batchNormMs / shoal.steps,
  });

  const torchSamplesPerSec = peer instanceof TorchPeer ? (torch.steps * c.batch) / torch.seconds : null;
  const torchNote = !c.torch ? 'no torch peer for this model' : peer instanceof TorchPeer ? describePeer(peer, torch.steps) : `torch: ${peer!.error}`;

  const ratio = sps(shoal) / sps(fit);
  // Epochs of the same round ran back to back: their ratio is what a slow patch of the machine disturbs least.
  const rounds = Math.min(shoal.epochs.length, fit.epochs.length);
  const paired = Array.from({ length: rounds }, (_, i) => fit.epochs[i] / shoal.epochs[i]);
  const row: Row = {
    model: c.model,
    describe: c.describe,
    batch: c.batch,
    params: stage.params.reduce((n, p) => n + p.size, 0),
    shoalSamplesPerSec: sps(shoal),
    shoalAgentSamplesPerSec: sps(agent),
    tfjsFitSamplesPerSec: sps(fit),
    torchSamplesPerSec,
    ratio,
    pairedMedianRatio: median(paired),
    agentRatio: sps(agent) / sps(fit),
    meetsTarget: ratio >= TARGET,
    shoalSteps: shoal.steps,
    fitSteps: fit.steps,
    shoalStepMs: (shoal.seconds / shoal.steps) * 1000,
    fitStepMs: (fit.seconds / fit.steps) * 1000,
    shoalBreakdown: perStep(shoalParts),
    shoalKernelsPerStep: total(shoalKernels, 'count'),
    fitKernelsPerStep: total(fitKernels, 'count'),
    shoalKernelMsPerStep: total(shoalKernels, 'ms'),
    fitKernelMsPerStep: total(fitKernels, 'ms'),
    kernelDiff: compareKernels(shoalKernels, fitKernels),
    shoalOverTorch: torchSamplesPerSec ? sps(shoal) / torchSamplesPerSec : null,
    torchNote,
    torchPeer: peer instanceof TorchPeer ? { ...peer.facts, removedEnv: peer.removedEnv } : null,
  };
  stage.dispose();
  agentStage.dispose();
  dataset.close();
  tf.dispose([...xs, ...ys]);
  loaded.dispose();
  return row;
}

/** The matrix shapes the ceilings are timed at: the MLP's first layer at its batch, and a square one. */
const GEMM_SHAPES: Array<[number, number, number]> = [
  [64, 784, 256],
  [512, 512, 512],
];

/** FLOP/s of the wasm backend's own matMul at m×k by k×n, repeated for about `seconds`, the result read back. */
function wasmMatMulFlops(m: number, k: number, n: number, seconds: number): number {
  const a = tf.randomUniform([m, k]);
  const b = tf.randomUniform([k, n]);
  tf.tidy(() => tf.matMul(a, b).dataSync());
  let reps = 0;
  const started = performance.now();
  while (performance.now() - started < seconds * 1000) {
    tf.tidy(() => tf.matMul(a, b).dataSync());
    reps++;
  }
  const elapsed = (performance.now() - started) / 1000;
  tf.dispose([a, b]);
  return (2 * m * k * n * reps) / elapsed;
}

interface Ceiling {
  shape: string;
  torchMmFlops: number | null;
  wasmMatMulFlops: number;
}

/** What one core can do at all: a native GEMM (torch.mm on OpenBLAS) and wasm's matMul, interleaved. */
async function ceilings(): Promise<{ rows: Ceiling[]; note: string }> {
  const peer = await TorchPeer.start(TORCH_PEER, ['--model', 'mlp', '--batches', '1']);
  try {
    const rows: Ceiling[] = [];
    for (const [m, k, n] of GEMM_SHAPES) {
      const wasm = wasmMatMulFlops(m, k, n, 1);
      rows.push({ shape: `${m}×${k}·${k}×${n}`, torchMmFlops: peer instanceof TorchPeer ? await peer.gemm(m, k, n, 1) : null, wasmMatMulFlops: wasm });
    }
    return { rows, note: peer instanceof TorchPeer ? describePeer(peer, 0).replace(/, 0 steps/, '') : `torch: ${peer.error}` };
  } finally {
    if (peer instanceof TorchPeer) peer.close();
  }
}

/** Every thread of this process (and the peers it starts) on core 0, so that Shoal, fit and PyTorch share one core. */
function pinToOneCore(): string {
  try {
    execFileSync('taskset', ['-apc', '0', String(process.pid)], { stdio: 'ignore' });
    return 'core 0 (taskset)';
  } catch (err) {
    return `not pinned (${(err as Error).message.split('\n')[0]})`;
  }
}

async function main(): Promise<void> {
  const pinned = pinToOneCore();
  const backend = await selectBackend({ prefer: ['wasm'] });
  if (backend.name !== 'wasm') console.error(`bench executor: running on ${backend.name}, not wasm (SHOAL_BACKEND?)`);
  // Embedding's gradient runs on the cpu backend (agents/backend/cpuFallbackKernels.ts): no "install tfjs-node" banner.
  const cpu = tf.findBackend('cpu') as { firstUse?: boolean } | null;
  if (cpu && 'firstUse' in cpu) cpu.firstUse = false;
  const loadBefore = loadavg();
  const root = mkdtempSync(join(tmpdir(), 'shoal-bench-executor-'));
  const rows: Row[] = [];
  const ceiling = await ceilings();
  try {
    for (const c of CASES) {
      console.error(`bench executor: ${c.model} (batch ${c.batch}) ...`);
      try {
        rows.push(await benchCase(c, root));
      } catch (err) {
        const message = (err as Error).message;
        console.error(`bench executor: ${c.model} failed: ${(err as Error).stack ?? message}`);
        rows.push({
          model: c.model, describe: c.describe, batch: c.batch, params: 0, shoalSamplesPerSec: null, shoalAgentSamplesPerSec: null, tfjsFitSamplesPerSec: null,
          torchSamplesPerSec: null, ratio: null, pairedMedianRatio: null, agentRatio: null, meetsTarget: null, shoalSteps: 0, fitSteps: 0, shoalStepMs: null, fitStepMs: null,
          shoalBreakdown: null, shoalKernelsPerStep: null, fitKernelsPerStep: null, shoalKernelMsPerStep: null, fitKernelMsPerStep: null, kernelDiff: '', shoalOverTorch: null, torchNote: '', torchPeer: null, error: message,
        });
      }
    }
  } finally {
    rmSync(root, { recursive: true, force: true });
  }

  const loadAfter = loadavg();
  const num = (digits: number) => (v: unknown) => (typeof v === 'number' ? v.toFixed(digits) : '—');
  const columns: Column<Row>[] = [
    { key: 'model', title: 'model' },
    { key: 'batch', title: 'batch', align: 'right' },
    { key: 'params', title: 'params', align: 'right' },
    { key: 'shoalSamplesPerSec', title: 'Shoal s/s', align: 'right', format: num(0) },
    { key: 'shoalAgentSamplesPerSec', title: 'Shoal+sync s/s', align: 'right', format: num(0) },
    { key: 'tfjsFitSamplesPerSec', title: 'fit s/s', align: 'right', format: num(0) },
    { key: 'torchSamplesPerSec', title: 'torch s/s', align: 'right', format: num(0) },
    { key: 'shoalOverTorch', title: 'Shoal/torch', align: 'right', format: (v) => (typeof v === 'number' ? `${v.toFixed(2)}×` : '—') },
    { key: 'ratio', title: 'Shoal/fit', align: 'right', format: (v, r) => (typeof v === 'number' ? `${v.toFixed(2)}×${r.meetsTarget ? '' : ' <'}` : '—') },
    { key: 'pairedMedianRatio', title: 'paired', align: 'right', format: (v) => (typeof v === 'number' ? `${v.toFixed(2)}×` : '—') },
    { key: 'agentRatio', title: '+sync/fit', align: 'right', format: (v) => (typeof v === 'number' ? `${v.toFixed(2)}×` : '—') },
    { key: 'shoalStepMs', title: 'Shoal ms', align: 'right', format: num(2) },
    { key: 'fitStepMs', title: 'fit ms', align: 'right', format: num(2) },
    {
      key: 'shoalBreakdown',
      title: 'Shoal gather/tape/update/bn ms',
      format: (v) => {
        const b = v as Breakdown | null;
        return b ? [b.gatherMs, b.lossBackwardMs, b.updateMs, b.batchNormMs].map((x) => x.toFixed(2)).join(' / ') : '—';
      },
    },
    { key: 'shoalKernelsPerStep', title: 'kernels S/fit', align: 'right', format: (v, r) => (typeof v === 'number' ? `${Math.round(v)}/${Math.round(r.fitKernelsPerStep ?? 0)}` : '—') },
    { key: 'shoalKernelMsPerStep', title: 'kernel ms S/fit', align: 'right', format: (v, r) => (typeof v === 'number' ? `${v.toFixed(2)}/${(r.fitKernelMsPerStep ?? 0).toFixed(2)}` : '—') },
    { key: 'kernelDiff', title: 'kernels/step, Shoal − fit', format: (v, r) => r.error ?? String(v) },
    { key: 'torchNote', title: 'torch' },
  ];
  const notes = [
    `Target: Shoal ≥ ${TARGET.toFixed(1)}× model.fit on every model (a "<" marks a model below it). Shoal/fit is samples/s of the "Shoal" column over "fit".`,
    'One process, tfjs wasm backend (single-threaded in Node), the same model.json and weights for both. Shoal: one agent\'s step on a one-stage plan ' +
      '(rows gathered from the .npy files and packed as the agent packs them, GraphStage.lossBackward over the whole batch with the loss read back, ' +
      `takeGradients, Shoal's SGD lr ${LR}, batch-norm statistics update). "Shoal+sync" routes the update through GradientSync on a group of one, as a ` +
      'synchronous agent does (gradients copied into buckets, back into tensors, then the same SGD).',
    `fit: tfl.loadLayersModel, compile({ optimizer: tf.train.sgd(${LR}), loss: the same Keras loss per output }) (from-logits sparse cross-entropy as ` +
      'tf.losses.softmaxCrossEntropy on one-hot targets made before timing: tfjs-layers accepts class-index targets only for its own sparse loss), model.fit(xs, ys, { batchSize, epochs: 1, shuffle: false, verbose: 0 }) over data already in tensors.',
    `Timing: ${BATCHES} batches per epoch; one warm-up epoch per workload not counted, then epochs of Shoal, Shoal+sync and fit alternate until each has ` +
      `~${SECONDS} s; "paired" is the median over rounds of fit's epoch time over Shoal's in the same round (robust to other load: 1-minute load average ` +
      `${loadBefore[0].toFixed(1)} before, ${loadAfter[0].toFixed(1)} after on ${cpus().length} cores). Shoal's breakdown (ms per step): gather = dataset.train.gather + input tensor; tape = lossBackward; update = takeGradients + optimizer; bn = batch-norm statistics.`,
    'kernels S/fit and kernel ms: tf.profile of one epoch of each, per step; the kernel time is what the backend reports per kernel, ' +
      'the rest of a step is JavaScript (tfjs-layers, the tape, Shoal). The last column lists the kernels whose per-step counts differ most.',
    'PyTorch: bench/peers/torch_executor.py --serve with /usr/bin/python3 (Debian python3-torch), torch.set_num_threads(1) and OMP/OPENBLAS/MKL_NUM_THREADS=1, ' +
      'OPENBLAS_CORETYPE/OPENBLAS_L2_SIZE removed from its environment where set; started and warmed up before the tfjs workloads, then one turn per round ' +
      "(about as long as Shoal's last epoch) after Shoal, Shoal+sync and fit, on the same core. The peer refuses to run on the reference BLAS; its row records " +
      'the BLAS (torch.__config__.show(), the libblas.so.3 alternative, the libraries mapped, OpenBLAS core) and the kernel. The MLP and the ResNet block only ' +
      '(same shapes, batch, SGD; torch.nn.CrossEntropyLoss on logits in place of the softmax head + cross-entropy on probabilities).',
    `Pinned: ${pinned}. Ceilings on that core (${ceiling.note}): ` +
      ceiling.rows.map((r) => `${r.shape}: torch.mm ${r.torchMmFlops === null ? '—' : `${(r.torchMmFlops / 1e9).toFixed(1)} GFLOP/s`}, wasm matMul ${(r.wasmMatMulFlops / 1e9).toFixed(1)} GFLOP/s`).join('; ') +
      '. builtin:* rows are the built-in models as agents build them (their Keras topology, tfjs-layers, seeded initializers), on the one executor.',
  ];
  report('executor', `Executor benchmark: Shoal's GraphStage vs tfjs model.fit, one process, wasm (target: Shoal ≥ ${TARGET.toFixed(1)}× model.fit on every model)`, rows, columns, notes, {
    config: { seconds: SECONDS, batchesPerEpoch: BATCHES, lr: LR, seed: SEED, backend: backend.name, target: TARGET, pinned },
    ceilings: ceiling,
    loadAverage: { before: loadBefore, after: loadAfter },
  });
}

main().catch((err) => {
  console.error(`bench executor failed: ${(err as Error).stack ?? (err as Error).message}`);
  process.exit(1);
});
