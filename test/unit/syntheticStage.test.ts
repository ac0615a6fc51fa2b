import * as tf from '@tensorflow/tfjs-core';
import '@tensorflow/tfjs-backend-cpu';
import { afterEach, describe, expect, it, vi } from 'vitest';
import { syntheticStage } from '../../agents/exec/syntheticStage.js';
import type { StageExecutor } from '../../agents/exec/stageExecutor.js';

/** A stage whose passes syntheticStage replaces: only its shapes and parameters are read. */
const stub = () => ({ outputShape: [3], inputShape: [5], params: [], paramSpecs: [] }) as unknown as StageExecutor;

afterEach(() => vi.restoreAllMocks());

/**
 * The two ways a synthetic pass waits: parked in the kernel (Atomics.wait), leaving the core to other
 * stages, or holding the core as real arithmetic does. No time is asserted; what is checked is
 * whether the thread parks, and what the passes return.
 */
describe('synthetic stage passes', () => {
  const passMs = 20;

  it('sleeping passes park the thread and return zeros of the right shapes', async () => {
    const stage = syntheticStage(stub(), { forward: passMs, backward: passMs });
    const park = vi.spyOn(Atomics, 'wait');
    const y = await stage.forward(tf.ones([2, 5]), 2);
    expect(park).toHaveBeenCalled();
    expect(y.shape).toEqual([2, 3]);
    expect(Array.from(y.dataSync())).toEqual([0, 0, 0, 0, 0, 0]);
  });

  it('busy passes never park the thread: they hold the core for the whole pass', async () => {
    const stage = syntheticStage(stub(), { forward: passMs, backward: passMs, busy: true });
    const park = vi.spyOn(Atomics, 'wait');
    (await stage.forward(tf.ones([2, 5]), 2)).dispose();
    const dx = await stage.backward(tf.ones([2, 5]), tf.ones([2, 3]), 2);
    expect(park).not.toHaveBeenCalled();
    expect(dx!.shape).toEqual([2, 5]);
  });
});
