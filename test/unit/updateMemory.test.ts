import '@tensorflow/tfjs-backend-cpu';
import * as tf from '@tensorflow/tfjs-core';
import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { updateTemporaries } from '../../engine/cost/updateMemory.js';
import { optimizerSlots } from '../../engine/plan/optimizerOptions.js';
import { OptimizerSchema } from '../../engine/plan/plan.js';

/**
 * The memory an optimizer's update needs beyond the model state, as the cost model counts it
 * (engine/cost/updateMemory.ts), against what the agents' own optimizers allocate: the tensor
 * high-water mark that the memory benchmark reads on agents (agents/runtime/memoryWatermark.ts).
 */
const dir = mkdtempSync(join(tmpdir(), 'shoal-update-memory-'));
const stats = join(dir, 'memory.jsonl');
let watermark: typeof import('../../agents/runtime/memoryWatermark.js');
let createOptimizer: typeof import('../../agents/exec/optimizer.js').createOptimizer;
let disposeMemo: typeof import('../../agents/exec/optimizer.js').disposeMemo;

beforeAll(async () => {
  // The watermark reads its variable when it loads, and must follow the engine before any tensor exists.
  process.env.SHOAL_MEMORY_STATS = stats;
  watermark = await import('../../agents/runtime/memoryWatermark.js');
  watermark.watchTensorMemory();
  ({ createOptimizer, disposeMemo } = await import('../../agents/exec/optimizer.js'));
  await tf.setBackend('cpu');
});
afterAll(() => {
  delete process.env.SHOAL_MEMORY_STATS;
  rmSync(dir, { recursive: true, force: true });
});

const CONFIGS = [
  { kind: 'sgd', learningRate: 0.1 },
  { kind: 'sgd', learningRate: 0.1, momentum: 0.9 },
  { kind: 'sgd', learningRate: 0.1, momentum: 0.9, nesterov: true },
  { kind: 'adam', learningRate: 1e-3 },
  { kind: 'adamw', learningRate: 1e-3 },
  { kind: 'rmsprop', learningRate: 1e-3 },
  { kind: 'rmsprop', learningRate: 1e-3, momentum: 0.9, centered: true },
  { kind: 'adagrad', learningRate: 1e-2 },
].map((c) => OptimizerSchema.parse(c));

describe('an update needs the model state, the gradients and its temporaries', () => {
  it.each(CONFIGS.map((c) => [JSON.stringify(c), c] as const))('%s', (_, config) => {
    const shapes = [[300, 40], [40], [7, 9]];
    const elements = shapes.reduce((n, s) => n + s.reduce((a, b) => a * b, 1), 0);
    const params = shapes.map((s, i) => tf.tidy(() => tf.variable(tf.randomUniform(s, -1, 1, 'float32', i + 1))));
    const optimizer = createOptimizer(config);
    let line = 0;
    for (let step = 0; step < 3; step++) {
      const grads = shapes.map((s, i) => tf.randomUniform(s, -1, 1, 'float32', 10 + i));
      // As agents/runtime/stepUndo.ts does: the state before the update stays alive to undo it.
      const undo = { params: params.map((p) => p.clone()), memo: optimizer.memo() };
      watermark.beginMemoryStep();
      optimizer.apply(params, grads);
      watermark.memoryStepDone({ rank: 0, stage: 0, replica: 0, shard: 0 }, step);
      undo.params.forEach((t) => t.dispose());
      disposeMemo(undo.memo);
      line += 1;
    }
    const steps = readFileSync(stats, 'utf8').trim().split('\n').slice(-line).map((l) => JSON.parse(l) as { startBytes: number; peakBytes: number });
    const bytes = elements * 4;
    // Beyond what was held before it (parameters, slots, gradients), the update's temporaries; the
    // first update also makes its slots' zeros.
    expect(steps.map((s) => s.peakBytes - s.startBytes)).toEqual(steps.map((_, i) => (updateTemporaries(config) + (i === 0 ? optimizerSlots(config) : 0)) * bytes));
    // Before an update: the parameters, their slots and the gradients (and whatever the other cases left).
    expect(steps[2].startBytes - steps[0].startBytes).toBe(optimizerSlots(config) * bytes);
    optimizer.dispose();
    params.forEach((p) => p.dispose());
  });
});
