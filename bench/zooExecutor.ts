/**
 * Which executor the built-in models should run on: StageModule (agents/exec/stageModule.ts, layer by
 * layer, Dense differentiated by hand from the kept activations) or GraphStage (agents/exec/graph/, the
 * executor of users' models: tfjs-layers' layers under one tf.grads tape). Same model, same data, same
 * optimizer, one process, wasm; the two alternate so a slow patch of the machine hits both alike.
 *
 *   npm run bench -- zooExecutor [--seconds 3] [--batch 64]
 *
 * Each built-in model (zoo `mlp`, `cnn`, `mlp-wide`) is written as the Keras topology `shoal export`
 * writes for it and opened like a user's model.json, so GraphStage runs exactly the architecture
 * StageModule runs. Two stage positions are timed, because the executors differ there:
 *  - last stage (every layer, forward + loss + backward): both record one tape.
 *  - the same with the gradients handed over per layer (what a data-parallel replica asks, to start
 *    its all-reduce early): StageModule then runs the forward, and its layer-by-layer backward with
 *    a yield after each layer; GraphStage still records one tape and hands everything over at the end.
 *  - non-last stage (every layer but the classifier, forward then backward from a gradient, as a
 *    pipeline's first stage does with recompute off): StageModule keeps the activations of the
 *    forward and differentiates Dense by hand without running it again; GraphStage runs the forward
 *    again under a tape when the backward comes (tfjs cannot keep a tape between two calls).
 * A step includes Shoal's Adam update of the stage's parameters.
 */
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import * as tf from '@tensorflow/tfjs-core';
import { selectBackend } from '../agents/backend/selectBackend.js';
import { buildGraphStage } from '../agents/exec/graph/buildGraphStage.js';
import { createOptimizer, type Optimizer } from '../agents/exec/optimizer.js';
import { wholeStageExecutor, type StageExecutor } from '../agents/exec/stageExecutor.js';
import { StageModule } from '../agents/exec/stageModule.js';
import { kerasTopology } from '../engine/model/export/kerasTopology.js';
import { trainingSpecFor } from '../engine/model/trainingSpec.js';
import { zooModel } from '../engine/model/zoo.js';
import { loadModel, modelDocument } from '../engine/node/modelRef.js';
import { parsePlan, type Plan } from '../engine/plan/plan.js';
import { presetPlan } from '../engine/plan/presets.js';
import { numberFlag } from './lib/args.js';
import { report, type Column } from './lib/report.js';

const SEED = 7;
const SECONDS = numberFlag('seconds', 3);
const BATCH = numberFlag('batch', 64);
const STEPS_PER_ROUND = 8;
const MODELS = ['mlp', 'cnn', 'mlp-wide'];

interface Row {
  model: string;
  position: 'last stage' | 'last stage, per layer' | 'non-last stage';
  layers: number;
  graphStageMsPerStep: number;
  stageModuleMsPerStep: number;
  /** GraphStage ms / StageModule ms: above 1, StageModule is faster. */
  stageModuleSpeedup: number;
  pairedMedianSpeedup: number;
}

type Step = () => Promise<void>;

/** `perLayer`: gradients handed over as each layer finishes, as a replica that overlaps its all-reduce asks. */
function lastStageStep(ex: StageExecutor, optimizer: Optimizer, x: tf.Tensor, targets: Float32Array, perLayer = false): Step {
  return async () => {
    const handed: tf.Tensor[] = [];
    const { dx } = await ex.lossBackward(x, targets, BATCH, BATCH, perLayer ? (k, g) => (handed[k] = g) : undefined);
    dx?.dispose();
    const grads = ex.takeGradients().map((g, k) => (handed[k] ? (g.dispose(), handed[k]) : g));
    optimizer.apply(ex.params, grads);
  };
}

function innerStageStep(ex: StageExecutor, optimizer: Optimizer, x: tf.Tensor): Step {
  return async () => {
    const y = await ex.forward(x, BATCH);
    const dy = tf.onesLike(y);
    const dx = await ex.backward(x, dy, BATCH);
    tf.dispose([y, dy]);
    dx?.dispose();
    optimizer.apply(ex.params, ex.takeGradients());
  };
}

/** Alternate rounds of the two steps until each has run SECONDS; ms per step of each, and the paired median ratio. */
async function race(a: Step, b: Step): Promise<{ aMs: number; bMs: number; paired: number }> {
  const round = async (step: Step) => {
    const t = performance.now();
    for (let i = 0; i < STEPS_PER_ROUND; i++) await step();
    return (performance.now() - t) / STEPS_PER_ROUND;
  };
  await round(a);
  await round(b);
  const as: number[] = [];
  const bs: number[] = [];
  while (as.reduce((s, v) => s + v, 0) * STEPS_PER_ROUND < SECONDS * 1000) {
    as.push(await round(a));
    bs.push(await round(b));
  }
  const mean = (v: number[]) => v.reduce((s, x) => s + x, 0) / v.length;
  const ratios = as.map((v, i) => v / bs[i]).sort((p, q) => p - q);
  return { aMs: mean(as), bMs: mean(bs), paired: ratios[ratios.length >> 1] };
}

async function benchModel(name: string, dir: string): Promise<Row[]> {
  const zoo = zooModel(name);
  const file = join(dir, `${name}.json`);
  writeFileSync(file, JSON.stringify({ format: 'layers-model', modelTopology: kerasTopology(zoo, 'shoal bench').topology }));
  const graph = loadModel(file);
  const losses = trainingSpecFor(graph, modelDocument(graph), {}).outputs;
  const ids = graph.layers.map((l) => l.id);
  const zooIds = zoo.layers.map((l) => l.id);
  const base = presetPlan(graph, 'pp1-dp1', { globalBatch: BATCH, microBatches: 1, seed: SEED });
  const planOf = (stages: string[][]): Plan => parsePlan({ ...base, model: file, stages: stages.map((layers) => ({ ...base.stages[0], layers })) });
  const adam = () => createOptimizer(base.optimizer);
  const x = tf.randomUniform([BATCH, ...zoo.layers[0].outputShape], 0, 1, 'float32', SEED);
  const classes = zoo.layers.at(-1)!.outputShape.at(-1)!;
  const targets = Float32Array.from({ length: BATCH }, (_, i) => (i * 7) % Math.min(classes, 10));
  const rows: Row[] = [];

  const whole = await buildGraphStage(graph, planOf([ids]), 0, losses);
  const wholeZoo = wholeStageExecutor(StageModule.create(zoo, zooIds, SEED, { keepActivations: true }));
  const last = await race(lastStageStep(whole, adam(), x, targets), lastStageStep(wholeZoo, adam(), x, targets));
  rows.push({ model: name, position: 'last stage', layers: zooIds.length, graphStageMsPerStep: last.aMs, stageModuleMsPerStep: last.bMs, stageModuleSpeedup: last.aMs / last.bMs, pairedMedianSpeedup: last.paired });
  const overlapped = await race(lastStageStep(whole, adam(), x, targets, true), lastStageStep(wholeZoo, adam(), x, targets, true));
  rows.push({ model: name, position: 'last stage, per layer', layers: zooIds.length, graphStageMsPerStep: overlapped.aMs, stageModuleMsPerStep: overlapped.bMs, stageModuleSpeedup: overlapped.aMs / overlapped.bMs, pairedMedianSpeedup: overlapped.paired });

  const inner = await buildGraphStage(graph, planOf([ids.slice(0, -1), ids.slice(-1)]), 0, losses);
  const innerZoo = wholeStageExecutor(StageModule.create(zoo, zooIds.slice(0, -1), SEED, { keepActivations: true }));
  const first = await race(innerStageStep(inner, adam(), x), innerStageStep(innerZoo, adam(), x));
  rows.push({ model: name, position: 'non-last stage', layers: zooIds.length - 1, graphStageMsPerStep: first.aMs, stageModuleMsPerStep: first.bMs, stageModuleSpeedup: first.aMs / first.bMs, pairedMedianSpeedup: first.paired });

  for (const ex of [whole, wholeZoo, inner, innerZoo]) ex.dispose();
  x.dispose();
  return rows;
}

async function main(): Promise<void> {
  const backend = await selectBackend({ prefer: ['wasm'] });
  const dir = mkdtempSync(join(tmpdir(), 'shoal-bench-zoo-executor-'));
  const rows: Row[] = [];
  try {
    for (const name of MODELS) {
      console.error(`bench zooExecutor: ${name} ...`);
      rows.push(...(await benchModel(name, dir)));
    }
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
  const ms = (v: unknown) => (typeof v === 'number' ? v.toFixed(2) : '—');
  const times = (v: unknown) => (typeof v === 'number' ? `${v.toFixed(2)}×` : '—');
  const columns: Column<Row>[] = [
    { key: 'model', title: 'model' },
    { key: 'position', title: 'stage' },
    { key: 'layers', title: 'layers', align: 'right' },
    { key: 'graphStageMsPerStep', title: 'GraphStage ms', align: 'right', format: ms },
    { key: 'stageModuleMsPerStep', title: 'StageModule ms', align: 'right', format: ms },
    { key: 'stageModuleSpeedup', title: 'StageModule speed-up', align: 'right', format: times },
    { key: 'pairedMedianSpeedup', title: 'paired median', align: 'right', format: times },
  ];
  const notes = [
    `Backend ${backend.name}, batch ${BATCH}, Shoal's Adam; rounds of ${STEPS_PER_ROUND} steps alternate until each executor has ~${SECONDS} s. ` +
      'Speed-up = GraphStage ms / StageModule ms (above 1: the hand-written layer-by-layer executor is faster).',
    'Last stage: forward + softmax cross-entropy + backward of every layer; "per layer": the gradients handed over as each layer finishes (a data-parallel replica overlapping its all-reduce). Non-last stage: every layer but the classifier, ' +
      'forward then backward from a gradient of ones, activations kept by StageModule (recompute off), re-run under a tape by GraphStage.',
  ];
  report('zooExecutor', `Built-in models: StageModule (hand-written Dense backward) vs GraphStage (tfjs-layers under one tape), ${backend.name}`, rows, columns, notes, {
    config: { seconds: SECONDS, batch: BATCH, seed: SEED, backend: backend.name },
  });
}

main().catch((err) => {
  console.error(`bench zooExecutor failed: ${(err as Error).stack ?? (err as Error).message}`);
  process.exit(1);
});
