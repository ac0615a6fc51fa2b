import * as tf from '@tensorflow/tfjs-core';
import '@tensorflow/tfjs-backend-cpu';
import { afterEach, describe, expect, it, vi } from 'vitest';
import { makeSynthetic } from '../../agents/exec/syntheticStage.js';
import type { StageModule } from '../../agents/exec/stageModule.js';

/** A stage module whose passes makeSynthetic replaces: only the output shape is read. */
const stub = () => ({ outputShape: [3] }) as unknown as StageModule;

afterEach(() => vi.restoreAllMocks());

/**
 * The two ways a synthetic pass waits: parked in the kernel (Atomics.wait), leaving the core to other
 * stages, or holding the core as real arithmetic does. No time is asserted; what is checked is
 * whether the thread parks, and what the passes return.
 */
describe('synthetic stage passes', () => {
  const passMs = 20;

  it('sleeping passes park the thread and return zeros of the right shapes', () => {
    const module = stub();
    makeSynthetic(module, { forward: passMs, backward: passMs });
    const park = vi.spyOn(Atomics, 'wait');
    const y = module.forward(tf.ones([2, 5]));
    expect(park).toHaveBeenCalled();
    expect(y.shape).toEqual([2, 3]);
    expect(Array.from(y.dataSync())).toEqual([0, 0, 0, 0, 0, 0]);
  });

  it('busy passes never park the thread: they hold the core for the whole pass', () => {
    const module = stub();
    makeSynthetic(module, { forward: passMs, backward: passMs, busy: true });
    const park = vi.spyOn(Atomics, 'wait');
    module.forward(tf.ones([2, 5])).dispose();
    const steps = module.backwardSteps(tf.ones([2, 5]), tf.ones([2, 3]));
    let dx = steps.next();
    while (!dx.done) dx = steps.next();
    expect(park).not.toHaveBeenCalled();
    expect((dx.value as tf.Tensor).shape).toEqual([2, 5]);
  });
});
