import * as tf from '@tensorflow/tfjs-core';
import '@tensorflow/tfjs-backend-cpu';
import { describe, expect, it } from 'vitest';
import { makeSynthetic } from '../../agents/exec/syntheticStage.js';
import type { StageModule } from '../../agents/exec/stageModule.js';

/** A stage module whose passes makeSynthetic replaces: only the output shape is read. */
const stub = () => ({ outputShape: [3] }) as unknown as StageModule;

/** CPU time (user + system, ms) this process spent running `f`. */
function cpuMsOf(f: () => void): number {
  const before = process.cpuUsage();
  f();
  const used = process.cpuUsage(before);
  return (used.user + used.system) / 1000;
}

/**
 * The two ways a synthetic pass waits. No wall time is asserted: what differs is whether the pass
 * holds its core (CPU time close to the pass) or parks the thread (CPU time near zero).
 */
describe('synthetic stage passes', () => {
  const passMs = 80;

  it('sleeping passes leave the core free and still return zeros of the right shapes', () => {
    const module = stub();
    makeSynthetic(module, { forward: passMs, backward: passMs });
    let y: tf.Tensor | undefined;
    const cpu = cpuMsOf(() => (y = module.forward(tf.ones([2, 5]))));
    expect(y!.shape).toEqual([2, 3]);
    expect(Array.from(y!.dataSync())).toEqual([0, 0, 0, 0, 0, 0]);
    // Only the last millisecond is spun (timer slack); the rest is parked in the kernel.
    expect(cpu).toBeLessThan(passMs / 4);
  });

  it('busy passes hold the core for the pass, as real arithmetic would', () => {
    const module = stub();
    makeSynthetic(module, { forward: passMs, backward: passMs, busy: true });
    const cpu = cpuMsOf(() => module.forward(tf.ones([2, 5])).dispose());
    // A descheduled busy loop accrues less CPU than wall time (about half of it with twice as many
    // busy threads as cores); a quarter is still far above what a sleeping pass uses.
    expect(cpu).toBeGreaterThan(passMs / 4);
    const steps = module.backwardSteps(tf.ones([2, 5]), tf.ones([2, 3]));
    let dx = steps.next();
    while (!dx.done) dx = steps.next();
    expect((dx.value as tf.Tensor).shape).toEqual([2, 5]);
  });
});
