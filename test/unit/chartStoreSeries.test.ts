import { describe, expect, it } from 'vitest';
import type { JobEvent } from '../../engine/protocol/events.js';
import { applyEvents, emptyMetrics } from '../../renderer/src/store/metrics.js';

const step = (n: number): JobEvent => ({ type: 'step', step: n, epoch: n / 100, loss: 1 / n, samplesPerSec: 500 + n, stepMs: 20, elapsedMs: 20 * n });
const steps = (from: number, to: number) => Array.from({ length: to - from + 1 }, (_, i) => step(from + i));

/** The store behind the Monitor's charts: a live job's series grow in place, never copied per update. */
describe("a live job's chart series in the store", () => {
  it('appends new steps to the same arrays, in a new metrics object', () => {
    const first = applyEvents(emptyMetrics(), steps(1, 1_000));
    const second = applyEvents(first, [step(1_001), { type: 'eval', step: 1_001, epoch: 10, validationLoss: 0.5, validationAccuracy: 0.9 }]);
    expect(second).not.toBe(first);
    for (const key of ['steps', 'loss', 'samplesPerSec', 'stepEpochs', 'stepMs', 'commWaitMs'] as const) {
      expect(second[key]).toBe(first[key]);
      expect(second[key]).toHaveLength(1_001);
    }
    expect(second.loss.at(-1)).toBe(1 / 1_001);
    expect(second.evalSteps).toEqual([1_001]);
    expect(second.accuracy).toEqual([90]);
  });

  it('keeps the log array unless there are new lines (its viewer scrolls on a new one)', () => {
    const first = applyEvents(emptyMetrics(), [{ type: 'log', level: 'info', host: 'h', rank: 0, message: 'hello', time: 1 }]);
    expect(applyEvents(first, [step(1)]).logs).toBe(first.logs);
    const logged = applyEvents(first, [{ type: 'log', level: 'warn', host: 'h', rank: 0, message: 'again', time: 2 }]);
    expect(logged.logs).not.toBe(first.logs);
    expect(logged.logs.map((l) => l.message)).toEqual(['hello', 'again']);
    expect(first.logs).toHaveLength(1);
  });

  it('folding an older object again forks its series at the length it had', () => {
    const base = applyEvents(emptyMetrics(), steps(1, 10));
    const a = applyEvents(base, steps(11, 12));
    const b = applyEvents(base, steps(11, 15));
    expect(a.steps).toEqual(steps(1, 12).map((_, i) => i + 1));
    expect(b.steps).toEqual(steps(1, 15).map((_, i) => i + 1));
    expect(b.loss).toHaveLength(15);
    expect(b.steps).not.toBe(a.steps);
    // Each goes on growing on its own.
    expect(applyEvents(a, [step(13)]).steps).toHaveLength(13);
    expect(applyEvents(b, [step(16)]).steps).toHaveLength(16);
  });

  it('still skips a step that is not newer than the last one (a back-fill overlap)', () => {
    const m = applyEvents(emptyMetrics(), steps(1, 5));
    expect(applyEvents(m, [step(3), step(5), step(6)]).steps).toEqual([1, 2, 3, 4, 5, 6]);
  });
});
