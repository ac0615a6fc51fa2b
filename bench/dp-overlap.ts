/**
 * Data-parallel overlap benchmark: the step time of 2 data-parallel agents with the
 * gradient all-reduce overlapped with the backward pass (buckets start as their layers finish) and
 * without (everything summed after the backward pass), against compute only — one agent doing one
 * replica's share of the work with nothing to communicate, the floor both runs aim at.
 *
 *   npm run bench -- dp-overlap [--steps 40] [--warmup 8] [--width 1024] [--depth 8] [--batch 64] [--repeats 2]
 *
 * Two models of equal Dense layers, so that gradients become final at a steady pace through the
 * backward pass (a model whose parameters sit in one layer has nothing to overlap): a deep MLP the
 * engine builds, and a user's model.json of the same widths with residual Adds and LayerNorms (what
 * an imported model gets: the same executor hands its gradients over layer by layer). Each
 * configuration runs `repeats` times and keeps its fastest mean step (others' work on the machine
 * only ever slows a run).
 */
import { mkdtempSync, rmSync } from 'node:fs';
import { loadavg, tmpdir } from 'node:os';
import { join } from 'node:path';
import type { ModelGraph } from '../engine/model/graph.js';
import { totalParams } from '../engine/model/graph.js';
import { sequentialGraph } from '../engine/model/sequential.js';
import { LocalJob } from '../engine/node/jobs/localJob.js';
import { loadModel } from '../engine/node/modelRef.js';
import { trainingSetupFrom } from '../engine/node/trainingOptions.js';
import { parsePlan } from '../engine/plan/plan.js';
import { presetPlan } from '../engine/plan/presets.js';
import type { TrainingSetup } from '../engine/protocol/trainingSetup.js';
import { saveLayersModel, tfl } from '../test/support/userModels.js';
import { report, type Column } from './lib/report.js';
import { numberFlag as flag } from './lib/args.js';

const steps = flag('steps', 40);
const warmup = flag('warmup', 8);
const width = flag('width', 1024);
const depth = flag('depth', 8);
const perReplica = flag('batch', 64);
const repeats = Math.max(1, flag('repeats', 2));

function deepMlp(): ModelGraph {
  const hidden = Array.from({ length: depth }, (_, i) => ({ id: `dense_${i + 1}`, spec: { kind: 'dense' as const, units: width, activation: 'relu' as const } }));
  return sequentialGraph('deep-mlp', `MLP 784-${depth}×${width}-10`, [784], [...hidden, { id: 'logits', spec: { kind: 'dense', units: 10, activation: 'linear' } }], 10);
}

/** The same widths as a user would write them in tfjs-layers: residual blocks of Dense + LayerNorm. */
async function residualMlpFile(dir: string): Promise<string> {
  const input = tfl.input({ shape: [784], name: 'pixels' });
  let x = tfl.layers.dense({ units: width, activation: 'relu', name: 'embed' }).apply(input) as tfl.SymbolicTensor;
  for (let i = 1; i < depth; i++) {
    const y = tfl.layers.dense({ units: width, activation: 'relu', name: `block_${i}` }).apply(x) as tfl.SymbolicTensor;
    x = tfl.layers.add({ name: `residual_${i}` }).apply([x, y]) as tfl.SymbolicTensor;
    if (i % 2 === 0) x = tfl.layers.layerNormalization({ name: `norm_${i}` }).apply(x) as tfl.SymbolicTensor;
  }
  const output = tfl.layers.dense({ units: 10, activation: 'softmax', name: 'classes' }).apply(x) as tfl.SymbolicTensor;
  const model = tfl.model({ inputs: input, outputs: output, name: 'residual_mlp' });
  model.compile({ optimizer: 'sgd', loss: 'sparseCategoricalCrossentropy' });
  return saveLayersModel(model, dir);
}

interface Subject {
  name: string;
  model: ModelGraph;
  training?: TrainingSetup;
}

interface Row {
  model: string;
  config: string;
  agents: number;
  stepMs: number;
  allReduceMs: number;
  vsCompute: number;
  hiddenShare: number | null;
}

interface Measured {
  stepMs: number;
  allReduceMs: number;
}

/** Mean step time after warm-up, and the mean time agents waited for gradient communication. */
async function measure({ model, training }: Subject, preset: string, globalBatch: number, overlap: boolean): Promise<Measured> {
  const preseted = presetPlan(model, preset, { globalBatch, optimizer: { kind: 'sgd', learningRate: 0.01, momentum: 0.9 } });
  const plan = model.source ? parsePlan({ ...preseted, model: model.source.modelFile }) : preseted;
  const dir = mkdtempSync(join(tmpdir(), 'shoal-dp-overlap-'));
  const stepMs: number[] = [];
  const waits: number[] = [];
  try {
    const agents = plan.stages[0].dataParallel;
    const job = new LocalJob({
      model,
      plan,
      training,
      agents,
      steps: warmup + steps,
      runDir: dir,
      evalEverySteps: warmup + steps,
      profile: false,
      overlapGradients: overlap,
      onEvent: (e) => {
        if (e.type === 'step' && e.step >= warmup) {
          stepMs.push(e.stepMs);
          waits.push(e.commWaitMs ?? 0);
        }
      },
    });
    await job.start();
    await job.exited();
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
  const mean = (xs: number[]) => xs.reduce((a, b) => a + b, 0) / Math.max(xs.length, 1);
  return { stepMs: mean(stepMs), allReduceMs: mean(waits) };
}

async function fastest(model: Subject, preset: string, globalBatch: number, overlap: boolean): Promise<Measured> {
  let best: Measured | null = null;
  for (let r = 0; r < repeats; r++) {
    const m = await measure(model, preset, globalBatch, overlap);
    if (!best || m.stepMs < best.stepMs) best = m;
  }
  return best!;
}

const loadBefore = loadavg()[0];
const modelDir = mkdtempSync(join(tmpdir(), 'shoal-dp-overlap-model-'));
const userFile = await residualMlpFile(modelDir);
const userModel = loadModel(userFile);
const subjects: Subject[] = [
  { name: 'built-in', model: deepMlp() },
  { name: "user's model.json", model: userModel, training: trainingSetupFrom({ data: 'mnist' }, userModel, 1) },
];
const rows: Row[] = [];
for (const subject of subjects) {
  const name = `${subject.name}: ${subject.model.source ? subject.model.name : (subject.model.description ?? subject.model.name)}`;
  const compute = await fastest(subject, 'pp1-dp1', perReplica, true);
  const off = await fastest(subject, 'pp1-dp2', 2 * perReplica, false);
  const on = await fastest(subject, 'pp1-dp2', 2 * perReplica, true);
  const exposedOff = off.stepMs - compute.stepMs;
  rows.push(
    { model: name, config: 'compute only (1 agent, one replica\'s batch)', agents: 1, stepMs: compute.stepMs, allReduceMs: 0, vsCompute: 1, hiddenShare: null },
    { model: name, config: 'dp=2, all-reduce after backward', agents: 2, stepMs: off.stepMs, allReduceMs: off.allReduceMs, vsCompute: off.stepMs / compute.stepMs, hiddenShare: 0 },
    { model: name, config: 'dp=2, buckets overlapped with backward', agents: 2, stepMs: on.stepMs, allReduceMs: on.allReduceMs, vsCompute: on.stepMs / compute.stepMs, hiddenShare: exposedOff > 0 ? (off.stepMs - on.stepMs) / exposedOff : null },
  );
  console.log(`${name}: compute ${compute.stepMs.toFixed(1)} ms, dp=2 after backward ${off.stepMs.toFixed(1)} ms, overlapped ${on.stepMs.toFixed(1)} ms`);
}
rmSync(modelDir, { recursive: true, force: true });
const columns: Column<Row>[] = [
  { key: 'model', title: 'model' },
  { key: 'config', title: 'configuration' },
  { key: 'agents', title: 'agents' },
  { key: 'stepMs', title: 'step ms', format: (v) => (v as number).toFixed(1) },
  { key: 'allReduceMs', title: 'comm wait ms', format: (v) => (v as number).toFixed(1) },
  { key: 'vsCompute', title: '× compute', format: (v) => (v as number).toFixed(2) },
  { key: 'hiddenShare', title: 'comm hidden', format: (v) => (v === null ? '—' : `${((v as number) * 100).toFixed(0)}%`) },
];
const mb = (model: ModelGraph) => `${((totalParams(model) * 4) / 2 ** 20).toFixed(1)} MB`;
report('dp-overlap', `Data-parallel overlap: ${subjects.map((s) => `${s.model.source ? s.model.name : (s.model.description ?? s.model.name)} (${mb(s.model)} of gradients)`).join(' and ')}, ${perReplica} samples per replica`, rows, columns, [
  `Mean of ${steps} steps after ${warmup} warm-up steps; the fastest of ${repeats} runs per configuration. Load average (1 min) before / after: ${loadBefore.toFixed(2)} / ${loadavg()[0].toFixed(2)}.`,
  '"comm wait" is the time an agent waited for gradient communication after its last layer (bucket waits, parameter all-gather).',
  '"comm hidden" is the share of the exposed communication (dp=2 without overlap minus compute only) that overlap removed.',
  'Overlap in one Node process: a bucket\'s bytes travel in the kernel while the next layer computes, but its sums run on the same thread between layers — so only part of the communication can hide.',
  "The user's model is read from its model.json (residual Adds, LayerNorm every second block) and trained on MNIST digits; the built-in on the same digits.",
], { gradientBytes: subjects.map((s) => totalParams(s.model) * 4), perReplicaBatch: perReplica });
