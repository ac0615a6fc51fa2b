import { describe, expect, it } from 'vitest';
import { localClusterSpec } from '../../engine/cluster/cluster.js';
import { costOfPlan } from '../../engine/cost/costOfPlan.js';
import { zooModel } from '../../engine/model/zoo.js';
import type { Plan } from '../../engine/plan/plan.js';
import { presetPlan } from '../../engine/plan/presets.js';
import { activationsInFlight, scheduleTraits, shardsOptimizerState } from '../../engine/plan/scheduleTraits.js';

const model = zooModel('mlp');
const plan = (schedule: Plan['schedule'], extra: Partial<Plan> = {}): Plan => ({ ...presetPlan(model, 'pp2-dp1-m4'), schedule, ...extra });

describe('schedule traits', () => {
  it('only the synchronous schedules have a step barrier, and only they shard the optimizer state', () => {
    expect(['gpipe', '1f1b', 'async'].map((s) => scheduleTraits(s as Plan['schedule']).stepBarrier)).toEqual([true, true, false]);
    expect(shardsOptimizerState(plan('gpipe', { zero: 1 }))).toBe(true);
    expect(shardsOptimizerState(plan('gpipe', { zero: 0 }))).toBe(false);
    expect(shardsOptimizerState(plan('async', { zero: 1 }))).toBe(false);
  });

  it('holds the activations the stage order keeps: m under GPipe, p − s under 1F1B, p − s + slack when streaming', () => {
    expect([0, 1].map((s) => activationsInFlight(plan('gpipe'), s))).toEqual([4, 4]);
    expect([0, 1].map((s) => activationsInFlight(plan('1f1b'), s))).toEqual([2, 1]);
    // PipeMare's default slack of one more forward in flight on every stage but the last.
    expect([0, 1].map((s) => activationsInFlight(plan('async'), s))).toEqual([3, 1]);
    expect(activationsInFlight(plan('async', { pipemare: { lrRescheduling: true, warmupUpdates: 500, discrepancyCorrection: true, decay: 0.1, inFlightSlack: 0 } }), 0)).toBe(2);
  });

  it('prices the asynchronous pipeline with the stash depth its agents run with', () => {
    const cluster = localClusterSpec(2);
    const activations = (p: Plan) => costOfPlan(p, model, cluster).devices[0].memory.activations;
    const perMicroBatch = activations(plan('1f1b')) / 2;
    expect(activations(plan('async'))).toBeCloseTo(3 * perMicroBatch, 6);
  });
});
