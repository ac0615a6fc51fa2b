import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { zooModel } from '../../engine/model/zoo.js';
import { executionSupport } from '../../engine/plan/executionSupport.js';
import type { Plan } from '../../engine/plan/plan.js';
import { presetPlan } from '../../engine/plan/presets.js';
import type { JobEvent } from '../../engine/protocol/events.js';
import { LocalJob } from '../../engine/node/jobs/localJob.js';

const root = mkdtempSync(join(tmpdir(), 'shoal-async-'));
afterAll(() => rmSync(root, { recursive: true, force: true }));
const model = zooModel('mlp');

async function train(tag: string, plan: Plan, agents: number, steps: number): Promise<JobEvent[]> {
  expect(executionSupport(plan)).toEqual([]);
  const events: JobEvent[] = [];
  const job = new LocalJob({ model, plan, agents, steps, runDir: join(root, tag), onEvent: (e) => events.push(e) });
  await job.start();
  await job.exited();
  return events;
}

/** Each test trains 4 real agents for 125 steps: one took 118 s under load 11 on 2 cores. */
const LONG_RUN_MS = 360_000;

/** PipeMare's asynchronous schedule on real agent processes: no flush, per-micro-batch updates. */
describe('asynchronous pipeline (PipeMare)', () => {
  it('pp2 × dp2 with both corrections learns, and reports each stage’s delay, step size and correction', async () => {
    const plan: Plan = { ...presetPlan(model, 'pp2-dp2'), schedule: 'async', pipemare: { lrRescheduling: true, warmupUpdates: 100, discrepancyCorrection: true, decay: 0.1, inFlightSlack: 1 } };
    const events = await train('both', plan, 4, 125);
    const final = events.at(-1);
    expect(final?.type === 'final' && final.validationAccuracy).toBeGreaterThan(0.9);
    const stats = events.filter((e) => e.type === 'pipeline');
    expect(stats).toHaveLength(2 * 125);
    const last = (stage: number) => stats.filter((e) => e.type === 'pipeline' && e.stage === stage).at(-1)!;
    // In 1F1B order without a flush, stage s of p sees p−s−1 updates between a forward and its update,
    // plus the in-flight slack on every stage but the last.
    expect(last(0)).toMatchObject({ delay: 2 });
    expect(last(1)).toMatchObject({ delay: 0, lrMultiplier: 1, correction: 0 });
    const first0 = stats.find((e) => e.type === 'pipeline' && e.stage === 0);
    expect(first0?.type === 'pipeline' && first0.correction).toBeGreaterThan(0);

    // Sampled steps carry the stream as it flowed: every agent's passes while the step was in flight,
    // on the coordinator's axis. With no flush, micro-batches of neighbouring steps share the window.
    const timelines = events.filter((e) => e.type === 'timeline');
    expect(timelines.map((e) => e.type === 'timeline' && e.step)).toEqual([0, 10, 20, 30, 40, 50, 60, 70, 80, 90, 100, 110, 120]);
    const middle = timelines[6];
    if (middle.type !== 'timeline') throw new Error('not a timeline');
    expect(new Set(middle.events.map((e) => e.rank))).toEqual(new Set([0, 1, 2, 3]));
    expect(new Set(middle.events.map((e) => e.kind))).toEqual(new Set(['forward', 'backward', 'optimizer']));
    // Stage 0's passes of one window belong to several steps' micro-batches (4 per step): no drain between them.
    const stage0Micros = middle.events.filter((e) => e.rank === 0 && e.kind === 'forward').map((e) => Math.floor(e.micro! / 4));
    expect(new Set(stage0Micros).size).toBeGreaterThan(1);
  }, LONG_RUN_MS);

  it('without corrections, and with virtual nodes, it still trains', async () => {
    const plan: Plan = {
      ...presetPlan(model, 'pp2-dp2'),
      schedule: 'async',
      virtualNodes: { total: 4 },
      pipemare: { lrRescheduling: false, warmupUpdates: 0, discrepancyCorrection: false, decay: 0.1, inFlightSlack: 0 },
    };
    const events = await train('none', plan, 4, 60);
    const final = events.at(-1);
    expect(final?.type === 'final' && final.validationAccuracy).toBeGreaterThan(0.85);
    expect(events.filter((e) => e.type === 'pipeline' && e.correction !== 0)).toEqual([]);
  }, LONG_RUN_MS);
});
