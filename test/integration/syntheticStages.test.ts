import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { zooModel } from '../../engine/model/zoo.js';
import type { Plan } from '../../engine/plan/plan.js';
import { presetPlan } from '../../engine/plan/presets.js';
import type { JobEvent } from '../../engine/protocol/events.js';
import { LocalJob } from '../../engine/node/jobs/localJob.js';

const root = mkdtempSync(join(tmpdir(), 'shoal-synthetic-'));
afterAll(() => rmSync(root, { recursive: true, force: true }));
const model = zooModel('cnn');
// Long enough that the runtime's own work per micro-batch (messages, optimizer update: a few ms) is
// small beside it, short enough to keep the tests quick.
const stageMs = { forward: 30, backward: 60 };

type PipelineEvent = Extract<JobEvent, { type: 'pipeline' }>;

async function pipelineEvents(tag: string, plan: Plan, steps: number): Promise<PipelineEvent[]> {
  const events: JobEvent[] = [];
  const job = new LocalJob({ model, plan, agents: 4, steps, evalEverySteps: steps, runDir: join(root, tag), syntheticStageMs: stageMs, onEvent: (e) => events.push(e) });
  await job.start();
  await job.exited();
  return events.filter((e): e is PipelineEvent => e.type === 'pipeline');
}

/**
 * Stages of fixed synthetic duration (sleeping, not computing) let a 2-core machine measure what a
 * schedule does with 4 stages: the ratios below hold however fast the machine is; no wall time is asserted.
 */
describe('synthetic stages', () => {
  it('GPipe with p = 4, m = 4 keeps each stage busy about m/(m+p−1) = 0.571 of the step', async () => {
    const plan: Plan = { ...presetPlan(model, 'pp4-dp1', { microBatches: 4 }), schedule: 'gpipe' };
    const stats = await pipelineEvents('gpipe', plan, 5);
    expect(stats).toHaveLength(4 * 5);
    // Step 0 also pays the first messages' connection warm-up; later steps are the steady state.
    const steady = stats.filter((e) => e.step > 0);
    const mean = steady.reduce((acc, e) => acc + e.utilization, 0) / steady.length;
    expect(Math.abs(mean - 4 / 7)).toBeLessThan(0.1);
    expect(steady.every((e) => e.delay === 0)).toBe(true);
  });

  it('the asynchronous schedule keeps every stage busy without bubbles', async () => {
    const plan: Plan = { ...presetPlan(model, 'pp4-dp1', { microBatches: 4 }), schedule: 'async' };
    const stats = await pipelineEvents('async', plan, 24);
    expect(stats).toHaveLength(4 * 24);
    for (let stage = 0; stage < 4; stage++) {
      const last = stats.filter((e) => e.stage === stage).at(-1)!;
      // Utilization is cumulative over the stream: the last report covers it all, fill and drain included.
      expect(last.utilization).toBeGreaterThanOrEqual(0.85);
      // p − s − 1 updates between a forward and its update, plus the in-flight slack (default 1) but on the last stage.
      expect(last.delay).toBe(stage === 3 ? 0 : 4 - stage);
    }
  });
});
