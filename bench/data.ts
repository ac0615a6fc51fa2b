/**
 * Data benchmark: a large NumPy dataset (default 10 GB) trained by real agent processes, with each
 * agent's resident memory bounded and the time spent waiting for input measured with prefetch on and
 * off, side by side in the same run.
 *
 *   npm run bench -- data [--gb 10] [--features 4096] [--steps 30] [--batch 64] [--agents 2] [--repeats 2] [--val-rows 16384]
 *
 * The data: x.npy, float32 rows of --features values (16 KiB a row by default), and y.npy, 10 class
 * ids, and a validation set of --val-rows more in val/ (the training files stay what they were), written in a throw-away folder (the free disk is checked first; the size is scaled down, with a
 * note, when it cannot hold the data) and deleted at the end. Freshly written, the files sit in the page
 * cache as far as memory allows. The model: an MLP features → 256 → 10 (tfjs-layers, saved as
 * model.json), trained on a pp1-dpN plan (every agent reads its slice of each batch) by a LocalJob with
 * the built agent bundle (`npm run build` first), once with SHOAL_PREFETCH=off (rows read in place,
 * right before each forward pass) and once with prefetch (a worker thread reads the next micro-batches
 * and the next step beside the compute). Each agent writes one line per step (SHOAL_DATA_STATS): step
 * time, time waiting for rows, peak RSS (getrusage maxrss); and one line per evaluation (SHOAL_EVAL_STATS),
 * which runs once, after the last step, over val/ in chunks of 250 rows, the next chunk read ahead with
 * prefetch. Reported: the dataset size, each run's share of step time spent waiting for data (steps after
 * the first two), the mean step time, the evaluation's time and wait, and each agent's peak RSS. Target:
 * wait ≤ 5% of step time with prefetch.
 */
import { closeSync, existsSync, mkdirSync, mkdtempSync, openSync, readFileSync, rmSync, statfsSync, writeSync } from 'node:fs';
import { loadavg, tmpdir } from 'node:os';
import { join } from 'node:path';
import { LocalJob } from '../engine/node/jobs/localJob.js';
import { loadModel } from '../engine/node/modelRef.js';
import { trainingSetupFrom } from '../engine/node/trainingOptions.js';
import { parsePlan } from '../engine/plan/plan.js';
import { presetPlan } from '../engine/plan/presets.js';
import { writeNpy } from '../engine/wire/data/npy.js';
import { saveLayersModel, tfl } from '../test/support/userModels.js';
import { numberFlag } from './lib/args.js';
import { report, type Column } from './lib/report.js';

const GiB = 1024 ** 3;
const wantGb = numberFlag('gb', 10);
const features = numberFlag('features', 4096);
const steps = numberFlag('steps', 30);
const batch = numberFlag('batch', 64);
const agents = numberFlag('agents', 2);
const repeats = numberFlag('repeats', 2);
const valRows = numberFlag('val-rows', 16384);
const notes: string[] = [];

/** The .npy header np.save writes for a C-order float32 array of this shape (version 1, padded to 64 bytes). */
function npyHeader(shape: number[]): Buffer {
  const dict = `{'descr': '<f4', 'fortran_order': False, 'shape': (${shape.join(', ')}), }`;
  const headerLen = Math.ceil((10 + dict.length + 1) / 64) * 64 - 10;
  const head = Buffer.alloc(10 + headerLen, 0x20);
  head.write('\x93NUMPY', 0, 'latin1');
  head[6] = 1;
  head[7] = 0;
  head.writeUInt16LE(headerLen, 8);
  head.write(dict, 10, 'latin1');
  head[head.length - 1] = 0x0a;
  return head;
}

/** Write x.npy (rows × features float32) in 64 MiB chunks, each a little different, and y.npy (class ids). */
function writeDataset(dir: string, rows: number): void {
  const fd = openSync(join(dir, 'x.npy'), 'w');
  try {
    writeSync(fd, npyHeader([rows, features]));
    const chunkRows = Math.max(1, Math.floor((64 * 1024 ** 2) / (features * 4)));
    const chunk = Float32Array.from({ length: chunkRows * features }, (_, i) => Math.sin(i * 0.37) * 0.5);
    const bytes = new Uint8Array(chunk.buffer);
    for (let done = 0, n = 0; done < rows; n++) {
      const count = Math.min(chunkRows, rows - done);
      chunk[0] = n; // rows differ from chunk to chunk
      writeSync(fd, bytes, 0, count * features * 4);
      done += count;
    }
  } finally {
    closeSync(fd);
  }
  writeNpy(join(dir, 'y.npy'), Int32Array.from({ length: rows }, (_, i) => (i * 7) % 10), [rows]);
}

interface StepLine { pid: number; step: number; stepMs: number; waitMs: number; hits: number; misses: number; maxRssKb: number }
interface EvalLine { pid: number; evalMs: number; waitMs: number; hits: number; misses: number; maxRssKb: number }
interface RunLines { steps: StepLine[]; evals: EvalLine[] }

function readLines<T>(file: string): T[] {
  if (!existsSync(file)) throw new Error(`no statistics from the agents (${file}); is dist/agent built from this tree (npm run build)?`);
  return readFileSync(file, 'utf8').trim().split('\n').map((l) => JSON.parse(l) as T);
}

async function train(dir: string, modelFile: string, prefetch: boolean, round: number): Promise<RunLines> {
  const model = loadModel(modelFile);
  const base = presetPlan(model, `pp1-dp${agents}`, { globalBatch: batch, microBatches: 2, seed: 7, optimizer: { kind: 'sgd', learningRate: 0.01, momentum: 0 } });
  const plan = parsePlan({ ...base, model: modelFile });
  const training = trainingSetupFrom({ data: join(dir, 'data') }, model, plan.seed);
  const statsFile = join(dir, `stats-${prefetch ? 'on' : 'off'}-${round}.jsonl`);
  const evalFile = join(dir, `evals-${prefetch ? 'on' : 'off'}-${round}.jsonl`);
  process.env.SHOAL_DATA_STATS = statsFile;
  process.env.SHOAL_EVAL_STATS = evalFile;
  process.env.SHOAL_PREFETCH = prefetch ? 'on' : 'off';
  const runDir = join(dir, `run-${prefetch ? 'on' : 'off'}-${round}`);
  const job = new LocalJob({ model, plan, training, agents, steps, runDir, profile: false, evalEverySteps: steps, timelineEverySteps: 0, onEvent: () => {} });
  await job.start();
  await job.exited();
  delete process.env.SHOAL_DATA_STATS;
  delete process.env.SHOAL_EVAL_STATS;
  delete process.env.SHOAL_PREFETCH;
  return { steps: readLines<StepLine>(statsFile), evals: readLines<EvalLine>(evalFile) };
}

function summary(prefetch: boolean, { steps: lines, evals }: RunLines) {
  const counted = lines.filter((l) => l.step >= 2);
  const stepMs = counted.reduce((a, l) => a + l.stepMs, 0);
  const waitMs = counted.reduce((a, l) => a + l.waitMs, 0);
  const pids = [...new Set(lines.map((l) => l.pid))];
  const rss = pids.map((p) => Math.max(...[...lines, ...evals].filter((l) => l.pid === p).map((l) => l.maxRssKb)) / 1024);
  return {
    prefetch: prefetch ? 'on (worker thread)' : 'off (read in place)',
    waitShare: (100 * waitMs) / stepMs,
    stepMs: stepMs / counted.length,
    waitMs: waitMs / counted.length,
    served: `${counted.reduce((a, l) => a + l.hits, 0)}/${counted.reduce((a, l) => a + l.hits + l.misses, 0)}`,
    // Per agent and evaluation (each agent evaluates its replica's share of val/).
    evalMs: evals.reduce((a, l) => a + l.evalMs, 0) / evals.length,
    evalWaitMs: evals.reduce((a, l) => a + l.waitMs, 0) / evals.length,
    evalServed: `${evals.reduce((a, l) => a + l.hits, 0)}/${evals.reduce((a, l) => a + l.hits + l.misses, 0)}`,
    peakRssMb: Math.max(...rss),
    rssEach: rss.map((r) => r.toFixed(0)).join(' / '),
  };
}

async function main() {
  const dir = mkdtempSync(join(tmpdir(), 'shoal-bench-data-'));
  try {
    const fs = statfsSync(dir);
    const freeGb = (fs.bavail * fs.bsize) / GiB;
    let gb = wantGb;
    const valGb = (valRows * features * 4) / GiB;
    if (gb + valGb > freeGb - 2) {
      gb = Math.max(0.1, Math.floor((freeGb - 2 - valGb) * 10) / 10);
      notes.push(`The disk holding ${tmpdir()} has ${freeGb.toFixed(1)} GiB free: the dataset is scaled down from ${wantGb} to ${gb} GiB.`);
    }
    const rows = Math.floor((gb * GiB) / (features * 4));
    console.log(`writing ${rows} rows × ${features} float32 (${gb} GiB) in ${dir} …`);
    const t0 = performance.now();
    const dataDir = join(dir, 'data');
    mkdirSync(dataDir);
    writeDataset(dataDir, rows);
    mkdirSync(join(dataDir, 'val'));
    writeDataset(join(dataDir, 'val'), valRows);
    console.log(`written in ${((performance.now() - t0) / 1000).toFixed(1)} s`);
    const input = tfl.input({ shape: [features], name: 'x' });
    const hidden = tfl.layers.dense({ units: 256, activation: 'relu', name: 'hidden' }).apply(input);
    const out = tfl.layers.dense({ units: 10, activation: 'softmax', name: 'probs' }).apply(hidden) as tfl.SymbolicTensor;
    const modelFile = await saveLayersModel(tfl.model({ inputs: input, outputs: out, name: 'wide_mlp' }), join(dir, 'model'));

    const datasetGb = (rows * features * 4) / GiB;
    // Off and on alternate, so a busy patch of the shared machine hits both alike.
    const lines = new Map<boolean, RunLines>([[false, { steps: [], evals: [] }], [true, { steps: [], evals: [] }]]);
    for (let round = 0; round < repeats; round++) {
      for (const prefetch of [false, true]) {
        console.log(`round ${round + 1}/${repeats}: training ${steps} steps with prefetch ${prefetch ? 'on' : 'off'} …`);
        const run = await train(dir, modelFile, prefetch, round);
        lines.get(prefetch)!.steps.push(...run.steps);
        lines.get(prefetch)!.evals.push(...run.evals);
      }
    }
    const measured = [false, true].map((prefetch) => ({ datasetGb, ...summary(prefetch, lines.get(prefetch)!) }));
    type Row = (typeof measured)[number];
    const columns: Column<Row>[] = [
      { key: 'prefetch', title: 'prefetch' },
      { key: 'datasetGb', title: 'dataset GiB', format: (v) => (v as number).toFixed(2) },
      { key: 'stepMs', title: 'step ms', format: (v) => (v as number).toFixed(1) },
      { key: 'waitMs', title: 'wait ms/step', format: (v) => (v as number).toFixed(2) },
      { key: 'waitShare', title: 'wait % of step', format: (v) => `${(v as number).toFixed(1)}%` },
      { key: 'served', title: 'reads from prefetch' },
      { key: 'evalMs', title: 'eval ms', format: (v) => (v as number).toFixed(0) },
      { key: 'evalWaitMs', title: 'eval wait ms', format: (v) => (v as number).toFixed(1) },
      { key: 'evalServed', title: 'eval reads from prefetch' },
      { key: 'peakRssMb', title: 'peak RSS MiB (max)', format: (v) => (v as number).toFixed(0) },
      { key: 'rssEach', title: 'peak RSS per agent process' },
    ];
    notes.push(
      `${rows} samples of ${features} float32 features (x.npy ${(datasetGb).toFixed(2)} GiB) and int32 labels; MLP ${features}→256→10, plan pp1-dp${agents}, global batch ${batch} in 2 micro-batches, ${steps} steps, ${repeats} runs of each alternating off/on; wait share over steps ≥ 2 of every run, summed over agents; peak RSS per agent process over the runs.`,
      `Evaluation: one after the last step of each run, over ${valRows} samples in val/ (${valGb.toFixed(2)} GiB), each agent its replica's share in chunks of 250 rows; eval ms and eval wait ms are per agent and evaluation (mean), the wait being the time the chunks' reads held up the compute.`,
      'Peak RSS is each agent process\'s getrusage maxrss (VmHWM), prefetch worker thread included: it does not grow with the dataset, which is read by offset, never loaded.',
      'The files were just written, so they are in the page cache as far as memory allows; with cold files the wait is the disk\'s.',
      `Load average at the end ${loadavg().map((l) => l.toFixed(1)).join(' ')}: the machine is shared (other jobs ran beside it); off and on alternate, so they share its conditions, but absolute times are not final.`,
    );
    report('data', `Data: a ${datasetGb.toFixed(2)} GiB .npy dataset on ${agents} agents, prefetch off vs on`, measured, columns, notes, { features, steps, batch, agents });
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
}

await main();
