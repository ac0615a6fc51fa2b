import { existsSync, mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, expect, it } from 'vitest';
import { LocalJob } from '../../engine/node/jobs/localJob.js';
import { trainingSetupFrom } from '../../engine/node/trainingOptions.js';
import { zooModel } from '../../engine/model/zoo.js';
import type { Plan } from '../../engine/plan/plan.js';
import { presetPlan } from '../../engine/plan/presets.js';
import type { JobEvent } from '../../engine/protocol/events.js';
import type { TrainingSetup } from '../../engine/protocol/trainingSetup.js';
import { writeNpyData } from '../support/userModels.js';
import { readParams } from './paramsFile.js';

/**
 * The asynchronous (PipeMare) schedule reads the user's rows ahead as the synchronous ones do: on
 * real agents over a NumPy folder, every read of the data-reading stages is served by the prefetch
 * worker (a hit, never a miss), and the parameters equal those of the same run with prefetch off —
 * prefetch decides nothing about what is read.
 */
const STEPS = 6;
const model = zooModel('mlp');
let root: string;
let training: TrainingSetup;
const plan: Plan = {
  ...presetPlan(model, 'pp2-dp1', { globalBatch: 16, microBatches: 2, seed: 5 }),
  schedule: 'async',
  pipemare: { lrRescheduling: true, warmupUpdates: 4, discrepancyCorrection: false, decay: 0.1, inFlightSlack: 1 },
};

beforeAll(() => {
  root = mkdtempSync(join(tmpdir(), 'shoal-async-prefetch-'));
  const data = join(root, 'data');
  writeNpyData(data, { x: { shape: [784], kind: 'float' }, y: { shape: [], kind: { classes: 10 } } }, 256);
  training = trainingSetupFrom({ data, 'validation-split': '0.25' }, model, plan.seed);
});
afterAll(() => rmSync(root, { recursive: true, force: true }));

interface StepStats { pid: number; step: number; hits: number; misses: number }

async function run(tag: string, prefetch: 'on' | 'off'): Promise<{ events: JobEvent[]; stats: StepStats[] }> {
  const statsFile = join(root, `${tag}.jsonl`);
  process.env.SHOAL_DATA_STATS = statsFile;
  process.env.SHOAL_PREFETCH = prefetch;
  const events: JobEvent[] = [];
  try {
    const job = new LocalJob({ model, plan, training, agents: 2, steps: STEPS, runDir: join(root, tag), profile: false, timelineEverySteps: 0, onEvent: (e) => events.push(e) });
    await job.start();
    await job.exited();
  } finally {
    delete process.env.SHOAL_DATA_STATS;
    delete process.env.SHOAL_PREFETCH;
  }
  const stats = existsSync(statsFile) ? readFileSync(statsFile, 'utf8').trim().split('\n').map((l) => JSON.parse(l) as StepStats) : [];
  return { events, stats };
}

it('an async pipeline over a NumPy folder reads every micro-batch ahead, and learns what it learns without prefetch', async () => {
  const on = await run('on', 'on');
  expect(on.events.at(-1)?.type, JSON.stringify(on.events.filter((e) => e.type === 'status'))).toBe('final');
  // Both stages read data (inputs on stage 0, labels on stage 1): a line per agent per finished step.
  expect(new Set(on.stats.map((s) => s.pid)).size).toBe(2);
  expect(on.stats.reduce((a, s) => a + s.misses, 0)).toBe(0);
  expect(on.stats.reduce((a, s) => a + s.hits, 0)).toBe(on.stats.length * plan.microBatches);

  const off = await run('off', 'off');
  expect(off.stats.reduce((a, s) => a + s.hits, 0)).toBe(0);
  const withPrefetch = readParams(join(root, 'on', 'checkpoints'));
  const without = readParams(join(root, 'off', 'checkpoints'));
  expect([...withPrefetch.keys()]).toEqual([...without.keys()]);
  for (const [name, values] of withPrefetch) expect(values, name).toEqual(without.get(name));
}, 300_000);
