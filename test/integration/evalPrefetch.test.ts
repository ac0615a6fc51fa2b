import { existsSync, mkdtempSync, readFileSync, rmSync, truncateSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, expect, it } from 'vitest';
import { LocalJob } from '../../engine/node/jobs/localJob.js';
import { trainingSetupFrom } from '../../engine/node/trainingOptions.js';
import { zooModel } from '../../engine/model/zoo.js';
import type { Plan } from '../../engine/plan/plan.js';
import { presetPlan } from '../../engine/plan/presets.js';
import type { EvalEvent, JobEvent } from '../../engine/protocol/events.js';
import { writeNpyData } from '../support/userModels.js';

/**
 * Evaluations read the validation rows ahead as training steps read theirs: on real agents (the built
 * bundle, whose prefetch worker sits beside it) over a NumPy folder, every validation read of the
 * data-reading stages (inputs on stage 0, targets on stage 1, chunk after chunk of 250 rows) is served
 * by the prefetch worker, and every evaluation reports bit for bit what it reports with prefetch off.
 * A validation file cut short under the run fails the job at its evaluation with the reader's message
 * (the file and the rows), as an in-place read does.
 */
const STEPS = 4;
const VALIDATION = 600; // 3 chunks on the one replica: 250, 250, 100
const model = zooModel('mlp');
const pipeline = presetPlan(model, 'pp2-dp1', { globalBatch: 16, microBatches: 2, seed: 5 });
// One stage in two shards: each shard reads its rows of the inputs and every target of a chunk.
const sharded = presetPlan(model, 'pp1-dp1-tp2', { globalBatch: 16, microBatches: 2, seed: 5 });
const arrays = { x: { shape: [784], kind: 'float' as const }, y: { shape: [], kind: { classes: 10 } } };
let root: string;

beforeAll(() => {
  root = mkdtempSync(join(tmpdir(), 'shoal-eval-prefetch-'));
});
afterAll(() => rmSync(root, { recursive: true, force: true }));

interface EvalStats { pid: number; evalId: number; hits: number; misses: number }

async function run(tag: string, plan: Plan, data: string, split: string | undefined, prefetch: 'on' | 'off', onEvent: (e: JobEvent) => void = () => {}) {
  const statsFile = join(root, `${tag}.jsonl`);
  const training = trainingSetupFrom({ data, ...(split ? { 'validation-split': split } : {}) }, model, plan.seed);
  process.env.SHOAL_EVAL_STATS = statsFile;
  process.env.SHOAL_PREFETCH = prefetch;
  const events: JobEvent[] = [];
  let error: Error | undefined;
  try {
    const job = new LocalJob({
      model, plan, training, agents: 2, steps: STEPS, evalEverySteps: 2, runDir: join(root, tag), profile: false, timelineEverySteps: 0,
      onEvent: (e) => {
        events.push(e);
        onEvent(e);
      },
    });
    error = await job.start().then(() => undefined, (err: Error) => err);
    await job.exited();
  } finally {
    delete process.env.SHOAL_EVAL_STATS;
    delete process.env.SHOAL_PREFETCH;
  }
  const stats = existsSync(statsFile) ? readFileSync(statsFile, 'utf8').trim().split('\n').map((l) => JSON.parse(l) as EvalStats) : [];
  return { events, evals: events.filter((e): e is EvalEvent => e.type === 'eval'), stats, error };
}

function heldOut(): string {
  const data = join(root, 'held-out');
  if (!existsSync(data)) writeNpyData(data, arrays, 1000);
  return data;
}

it('evaluations read every validation chunk through the prefetch worker and report exactly what in-place reads report', async () => {
  const on = await run('on', pipeline, heldOut(), '0.6', 'on');
  expect(on.error, JSON.stringify(on.events.filter((e) => e.type === 'status' || e.type === 'log'))).toBeUndefined();
  expect(on.evals.length).toBeGreaterThanOrEqual(2);
  // One line per evaluation from each data-reading agent (stage 0 reads inputs, stage 1 targets): 3 chunks, 3 reads, all hits.
  expect(new Set(on.stats.map((s) => s.pid)).size).toBe(2);
  expect(on.stats.length).toBe(2 * new Set(on.stats.map((s) => s.evalId)).size);
  for (const s of on.stats) expect({ hits: s.hits, misses: s.misses }).toEqual({ hits: 3, misses: 0 });

  const off = await run('off', pipeline, heldOut(), '0.6', 'off');
  expect(off.error).toBeUndefined();
  for (const s of off.stats) expect({ hits: s.hits, misses: s.misses }).toEqual({ hits: 0, misses: 3 });
  expect(on.evals.length).toBe(off.evals.length);
  // Bit-identical: the same losses, accuracies, metrics and confusion counts (the validation rows are the same).
  expect(on.evals).toEqual(off.evals);
  expect(on.evals[0].validationLoss).toBeGreaterThan(0);
  expect(on.evals.at(-1)?.confusion?.total).toBe(VALIDATION);
}, 300_000);

it('a sharded stage reads its shard of each chunk\'s inputs and all its targets ahead, with the same results', async () => {
  const on = await run('tp-on', sharded, heldOut(), '0.6', 'on');
  expect(on.error, JSON.stringify(on.events.filter((e) => e.type === 'status'))).toBeUndefined();
  expect(new Set(on.stats.map((s) => s.pid)).size).toBe(2);
  for (const s of on.stats) expect({ hits: s.hits, misses: s.misses }).toEqual({ hits: 6, misses: 0 });
  const off = await run('tp-off', sharded, heldOut(), '0.6', 'off');
  expect(off.error).toBeUndefined();
  expect(on.evals.length).toBeGreaterThanOrEqual(2);
  expect(on.evals).toEqual(off.evals);
  expect(on.evals[0].validationLoss).toBeGreaterThan(0); // a sharded output reports loss and accuracy (no confusion)
}, 300_000);

it('a val/ file cut short under the run fails the job at its evaluation with the file and the rows', async () => {
  const data = join(root, 'val-folder');
  writeNpyData(data, arrays, 400);
  writeNpyData(join(data, 'val'), arrays, VALIDATION, 2);
  let cut = false;
  const broken = await run('cut', pipeline, data, undefined, 'on', (e) => {
    if (e.type === 'step' && !cut) {
      cut = true; // training reads the other files and goes on; the evaluation at step 2 meets the cut
      truncateSync(join(data, 'val', 'x.npy'), 1000);
    }
  });
  expect(cut).toBe(true);
  expect(broken.error, 'the evaluation cannot read rows its file lost').toBeDefined();
  expect(broken.error!.message).toMatch(/val\/x\.npy: truncated while reading rows \d+\.\.\d+ \(did the file change under the run\?\)/);
  expect(broken.evals).toEqual([]);
}, 300_000);
