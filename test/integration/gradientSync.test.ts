import '@tensorflow/tfjs-backend-cpu';
import * as tf from '@tensorflow/tfjs-core';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { beforeAll, describe, expect, it } from 'vitest';
import { runPeerWorkers } from '../support/peerWorkers.js';
import type { OptimizerConfig } from '../../engine/plan/plan.js';
import { reference } from '../support/gradientCase.js';

/**
 * GradientSync across real processes (one replica each, as agents run): after several steps with
 * different gradients per replica, every replica's parameters and gathered optimizer state must equal
 * one-process training on the summed gradients.
 */

const WORKER = join(dirname(fileURLToPath(import.meta.url)), 'gradientSyncWorker.ts');

interface Result {
  error?: string;
  params: number[][];
  state: { step: number; slots: Record<string, number[][]> };
  timings: Array<{ allReduceMs: number; commMs: number }>;
}

/** Run `procs` worker processes through a scenario; returns each rank's result line. */
const run = (procs: number, scenario: object) => runPeerWorkers<Result>(WORKER, procs, JSON.stringify(scenario), { error: 'exited without a result' } as Result);

function relativeError(actual: number[], expected: Float32Array): number {
  let worst = 0;
  let scale = 0;
  expected.forEach((e, i) => {
    worst = Math.max(worst, Math.abs(actual[i] - e));
    scale = Math.max(scale, Math.abs(e));
  });
  return worst / Math.max(scale, 1e-12);
}

beforeAll(async () => {
  await tf.setBackend('cpu');
});

const STEPS = 3;

describe('GradientSync across real processes', () => {
  it.each([
    [2, 1, { kind: 'sgd', learningRate: 0.1, momentum: 0.9 }, undefined],
    [4, 2, { kind: 'adam', learningRate: 0.01, beta1: 0.9, beta2: 0.999, epsilon: 1e-7 }, 0.5],
  ] as Array<[number, number, OptimizerConfig, number | undefined]>)('%i replicas, ZeRO %i: parameters and optimizer state match one process', async (procs, zero, optimizer, clipNorm) => {
    const results = await run(procs, { zero, optimizer, bucketBytes: 40, clipNorm, steps: STEPS });
    expect(results.map((r) => r.error)).toEqual(results.map(() => undefined));
    const expected = reference(procs, STEPS, optimizer, clipNorm);
    for (const r of results) {
      r.params.forEach((values, i) => expect(relativeError(values, expected.values[i]), `parameter ${i}`).toBeLessThan(1e-5));
      expect(r.params).toEqual(results[0].params);
      expect(r.state.step).toBe(expected.state.step);
      for (const [name, arrays] of Object.entries(expected.state.slots)) {
        arrays.forEach((a, i) => expect(relativeError(r.state.slots[name][i], a), `slot ${name} of parameter ${i}`).toBeLessThan(1e-5));
      }
      for (const t of r.timings) expect(t.commMs).toBeGreaterThan(0);
    }
  });
});
