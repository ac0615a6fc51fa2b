/**
 * Memory benchmark: does the cost model's memory per device match what the agents hold?
 *
 *   npm run bench -- memory [--steps 3]
 *
 * Users' models saved as model.json + weights.bin (an MLP, a CNN, an LSTM and a small transformer),
 * trained for a few steps on local agents under plans that differ in what memory depends on: data
 * parallel, pipeline stages with GPipe's and 1F1B's micro-batches in flight, ZeRO, recomputation, the
 * optimizer's state. Each agent writes the high-water mark of its tensors' data buffers per step
 * (agents/runtime/memoryWatermark.ts, SHOAL_MEMORY_STATS); measured is the highest over the steps,
 * predicted is costOfPlan's memory total for that agent's device. A row per plan holds the device
 * where they differ most, with every device's pair beside it in the JSON.
 */
import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { cpus, loadavg, tmpdir } from 'node:os';
import { join } from 'node:path';
import { localClusterSpec } from '../engine/cluster/cluster.js';
import { costOfPlan } from '../engine/cost/costOfPlan.js';
import type { ModelGraph } from '../engine/model/graph.js';
import { LocalJob } from '../engine/node/jobs/localJob.js';
import { loadModel } from '../engine/node/modelRef.js';
import { trainingSetupFrom } from '../engine/node/trainingOptions.js';
import { agentsNeeded, parsePlan, type Plan } from '../engine/plan/plan.js';
import { presetPlan } from '../engine/plan/presets.js';
import { writeNpyData } from '../test/support/userModels.js';
import { numberFlag } from './lib/args.js';
import { report, type Column } from './lib/report.js';
import { benchCnn, benchLstm, benchMlp, benchTransformer, saveTopology, type BenchModel } from './lib/memoryModels.js';

const steps = numberFlag('steps', 3);

interface Case {
  model: string;
  preset: string;
  extra: Partial<Plan>;
  globalBatch: number;
  microBatches?: number;
}

// At most 2 agents: this machine has 2 cores.
const cases: Case[] = [
  { model: 'mlp', preset: 'pp1-dp1', extra: {}, globalBatch: 128 },
  { model: 'mlp', preset: 'pp1-dp2', extra: { zero: 1 }, globalBatch: 128 },
  { model: 'mlp', preset: 'pp2-dp1', extra: {}, globalBatch: 128, microBatches: 4 },
  { model: 'cnn', preset: 'pp1-dp1', extra: {}, globalBatch: 64 },
  { model: 'cnn', preset: 'pp2-dp1', extra: { schedule: '1f1b' }, globalBatch: 64, microBatches: 4 },
  { model: 'cnn', preset: 'pp2-dp1', extra: { recompute: true }, globalBatch: 64, microBatches: 4 },
  { model: 'lstm', preset: 'pp1-dp1', extra: {}, globalBatch: 64 },
  { model: 'lstm', preset: 'pp1-dp2', extra: { zero: 2 }, globalBatch: 64 },
  { model: 'transformer', preset: 'pp1-dp1', extra: {}, globalBatch: 32 },
  { model: 'transformer', preset: 'pp2-dp1', extra: {}, globalBatch: 32, microBatches: 4 },
  { model: 'transformer', preset: 'pp2-dp1', extra: { recompute: true }, globalBatch: 32, microBatches: 4 },
];

const MODELS: Record<string, BenchModel> = { mlp: benchMlp, cnn: benchCnn, lstm: benchLstm, transformer: benchTransformer };

interface DeviceRow {
  rank: number;
  stage: number;
  predictedBytes: number;
  measuredBytes: number;
  /** The high-water mark during the forward and backward passes alone, before the update. */
  measuredPassesBytes: number;
}

interface Row {
  plan: string;
  model: string;
  agents: number;
  predictedBytes: number;
  measuredBytes: number;
  /** (predicted − measured) / measured on the device where that is largest in size. */
  error: number;
  predictedActivationBytes: number;
  devices: DeviceRow[];
}

const describe = (c: Case) =>
  [c.preset, c.microBatches ? `m${c.microBatches}` : '', c.extra.schedule ?? '', c.extra.zero ? `zero${c.extra.zero}` : '', c.extra.recompute ? 'recompute' : '', `b${c.globalBatch}`].filter(Boolean).join(' ');

const root = mkdtempSync(join(tmpdir(), 'shoal-bench-memory-'));
const started = performance.now();
const loadBefore = loadavg()[0];
const saved = new Map<string, { graph: ModelGraph; data: string }>();

function modelFiles(name: string): { graph: ModelGraph; data: string } {
  if (!saved.has(name)) {
    const m = MODELS[name];
    const file = saveTopology(m.build(), join(root, name));
    const data = join(root, name, 'data');
    writeNpyData(data, m.arrays, 256);
    saved.set(name, { graph: loadModel(file), data });
  }
  return saved.get(name)!;
}

const rows: Row[] = [];
let runs = 0;
for (const c of cases) {
  const { graph, data } = modelFiles(c.model);
  const base = presetPlan(graph, c.preset, { globalBatch: c.globalBatch, ...(c.microBatches ? { microBatches: c.microBatches } : {}), seed: 3, optimizer: { kind: 'adam', learningRate: 1e-3, beta1: 0.9, beta2: 0.999, epsilon: 1e-7 } });
  const plan = parsePlan({ ...base, model: graph.source!.modelFile, ...c.extra });
  const agents = agentsNeeded(plan);
  const statsFile = join(root, `memory-${runs}.jsonl`);
  const runDir = join(root, `run-${runs++}`);
  process.env.SHOAL_MEMORY_STATS = statsFile;
  try {
    const job = new LocalJob({ model: graph, plan, training: trainingSetupFrom({ data }, graph, plan.seed), agents, steps, runDir, profile: false, evalEverySteps: 1_000_000, timelineEverySteps: 0, onEvent: () => {} });
    await job.start();
    await job.exited();
  } finally {
    delete process.env.SHOAL_MEMORY_STATS;
  }
  const lines = readFileSync(statsFile, 'utf8').trim().split('\n').map((l) => JSON.parse(l) as { rank: number; stage: number; step: number; peakBytes: number; passesPeakBytes: number });
  const cost = costOfPlan(plan, graph, localClusterSpec(agents), { activations: 'tfjs' });
  const devices: DeviceRow[] = cost.devices.map((d) => ({
    rank: d.rank,
    stage: d.stage,
    predictedBytes: d.memory.total,
    measuredBytes: Math.max(...lines.filter((l) => l.rank === d.rank).map((l) => l.peakBytes)),
    measuredPassesBytes: Math.max(...lines.filter((l) => l.rank === d.rank).map((l) => l.passesPeakBytes)),
  }));
  const worst = devices.reduce((a, b) => (Math.abs(b.predictedBytes / b.measuredBytes - 1) > Math.abs(a.predictedBytes / a.measuredBytes - 1) ? b : a));
  const worstDevice = cost.devices.find((d) => d.rank === worst.rank)!;
  rows.push({
    plan: describe(c),
    model: c.model,
    agents,
    predictedBytes: worst.predictedBytes,
    measuredBytes: worst.measuredBytes,
    error: worst.predictedBytes / worst.measuredBytes - 1,
    predictedActivationBytes: worstDevice.memory.activations,
    devices,
  });
  console.log(`${c.model} ${describe(c)}: ${devices.map((d) => `rank ${d.rank} predicted ${kib(d.predictedBytes)} measured ${kib(d.measuredBytes)} (passes ${kib(d.measuredPassesBytes)})`).join('; ')}`);
}
rmSync(root, { recursive: true, force: true });

function kib(bytes: number): string {
  return `${(bytes / 1024).toFixed(1)} KiB`;
}
const within = rows.filter((r) => Math.abs(r.error) <= 0.15).length;
const worstError = Math.max(...rows.map((r) => Math.abs(r.error)));
const columns: Column<Row>[] = [
  { key: 'model', title: 'model' },
  { key: 'plan', title: 'plan' },
  { key: 'agents', title: 'agents' },
  { key: 'predictedBytes', title: 'predicted', format: (v) => kib(v as number), align: 'right' },
  { key: 'measuredBytes', title: 'measured', format: (v) => kib(v as number), align: 'right' },
  { key: 'error', title: 'error', format: (v) => `${(v as number) >= 0 ? '+' : ''}${((v as number) * 100).toFixed(1)}%`, align: 'right' },
  { key: 'predictedActivationBytes', title: 'pred. activations', format: (v) => kib(v as number), align: 'right' },
];
const notes = [
  `Measured: per agent, the most bytes tensors' data buffers held at once during a step (every buffer tfjs's engine registers and frees, followed to the allocation; agents/runtime/memoryWatermark.ts), highest over ${steps} steps. Predicted: costOfPlan's memory total for that device with activations counted as tfjs holds them (activations: 'tfjs'): parameters, optimizer state under ZeRO, the runtime's copies (the undo copy, ZeRO's chunk variables), and the larger of the passes (gradients, tapes and kept outputs × micro-batches in flight, buffers) and the update (gradients and every temporary of the optimizer). Each row shows the device where predicted and measured differ most.`,
  `${within} of ${rows.length} plans within 15% (target: all); largest error ${(worstError * 100).toFixed(1)}%.`,
  `Adam (2 slots per parameter), float32, the agents' default backend. Load average (1 min) before / after ${loadBefore.toFixed(2)} / ${loadavg()[0].toFixed(2)} on ${cpus().length} cores; benchmark wall time ${((performance.now() - started) / 1000).toFixed(0)} s.`,
];
report('memory', 'Memory per device: predicted by the cost model vs the agents’ tensor high-water mark', rows, columns, notes, { steps, within, worstError });
