import { describe, expect, it } from 'vitest';
import { gpipeOrder, oneFOneBOrder, peakInFlight } from '../../engine/sim/scheduleOrder.js';
import { simulatePipeline, type StageCost } from '../../engine/sim/simulatePipeline.js';

const uniform = (p: number, f = 1, b = 2): StageCost[] =>
  Array.from({ length: p }, () => ({ forwardMs: f, backwardMs: b, sendActivationMs: 0, sendGradientMs: 0, allReduceMs: 0, optimizerMs: 0 }));

describe('pipeline simulation', () => {
  for (const schedule of ['gpipe', '1f1b'] as const) {
    for (const [p, m] of [[2, 4], [4, 4], [4, 8], [4, 16], [8, 32], [3, 1]]) {
      it(`${schedule}: p=${p}, m=${m} has bubble (p−1)/(m+p−1) and step (m+p−1)(f+b)`, () => {
        const sim = simulatePipeline(uniform(p), m, schedule);
        expect(sim.bubbleFraction).toBeCloseTo((p - 1) / (m + p - 1), 12);
        expect(sim.stepMs).toBeCloseTo((m + p - 1) * 3, 9);
      });
    }
  }

  it('async has no bubble on uniform stages and costs m(f+b) per step', () => {
    const sim = simulatePipeline(uniform(4), 8, 'async');
    expect(sim.bubbleFraction).toBe(0);
    expect(sim.stepMs).toBe(8 * 3);
  });

  it('the slowest stage bounds every schedule', () => {
    const stages = uniform(3);
    stages[1].forwardMs = 5;
    const gpipe = simulatePipeline(stages, 8, 'gpipe');
    expect(gpipe.stepMs).toBeGreaterThanOrEqual(8 * (5 + 2));
    expect(simulatePipeline(stages, 8, 'async').stepMs).toBe(8 * 7);
  });

  it('transfers between stages delay dependent passes', () => {
    const stages = uniform(2).map((s) => ({ ...s, sendActivationMs: 0.5, sendGradientMs: 0.5 }));
    expect(simulatePipeline(stages, 1, 'gpipe').stepMs).toBe(1 + 0.5 + 1 + 2 + 0.5 + 2);
  });

  it('all-reduce after the flush is exposed unless overlapped with backward', () => {
    const stages = uniform(1).map((s) => ({ ...s, allReduceMs: 4, optimizerMs: 1 }));
    expect(simulatePipeline(stages, 2, 'gpipe').stepMs).toBe(6 + 4 + 1);
    stages[0].allReduceOverlap = 0.75;
    const overlapped = simulatePipeline(stages, 2, 'gpipe');
    expect(overlapped.stepMs).toBe(6 + 1 + 1);
    expect(overlapped.exposedCommMs[0]).toBe(1);
    // Hidden only behind the last micro-batch's backward (2 ms) when gradients are final only then.
    stages[0].overlapWindowMs = stages[0].backwardMs;
    expect(simulatePipeline(stages, 2, 'gpipe').exposedCommMs[0]).toBe(4 - 2);
  });

  it('emits a forward and a backward event per micro-batch and stage, in the shared timeline schema', () => {
    const sim = simulatePipeline(uniform(2), 4, '1f1b');
    expect(sim.events.filter((e) => e.kind === 'forward')).toHaveLength(8);
    expect(sim.events.filter((e) => e.kind === 'backward')).toHaveLength(8);
    for (const e of sim.events) expect(e.endMs).toBeGreaterThanOrEqual(e.startMs);
  });
});

describe('schedule orders', () => {
  it('1F1B keeps at most p−s micro-batches in flight; GPipe keeps m', () => {
    for (let s = 0; s < 4; s++) expect(peakInFlight(oneFOneBOrder(16, s, 4))).toBe(4 - s);
    // One micro-batch of slack for latency on every stage but the last, whose forward is its backward.
    expect([0, 1, 2, 3].map((s) => peakInFlight(oneFOneBOrder(16, s, 4, 1)))).toEqual([5, 4, 3, 1]);
    expect(peakInFlight(oneFOneBOrder(3, 0, 4, 1))).toBe(3);
    expect(peakInFlight(gpipeOrder(16))).toBe(16);
  });
});
