import * as tf from '@tensorflow/tfjs-core';
import { clipByGlobalNorm } from '../../agents/exec/clipping.js';
import type { GradientSync, SyncTimings } from '../../agents/exec/gradientSync.js';
import { createOptimizer } from '../../agents/exec/optimizer.js';
import type { OptimizerConfig } from '../../engine/plan/plan.js';

/**
 * The training case GradientSync's tests share (in-process and real processes): a small stage, and
 * per step different gradients on every data-parallel member whose sum is the one-process gradient.
 */

/** Deterministic floats in [-0.5, 0.5) (not integers, so summation order shows in the last bits). */
export function noise(length: number, seed: number): Float32Array {
  let x = (seed * 2654435761 + 7) % 2147483648;
  return Float32Array.from({ length }, () => {
    x = (x * 1103515245 + 12345) % 2147483648;
    return x / 2147483648 - 0.5;
  });
}

/** The model's parameter shapes: a few small layers, one of them larger than the smallest bucket budget. */
export const SHAPES: number[][] = [[12, 8], [8], [8, 6], [6], [6, 3], [3], [1]];
export const size = (shape: number[]) => shape.reduce((a, b) => a * b, 1);
export const initialValues = () => SHAPES.map((s, i) => noise(size(s), 100 + i));
export const variables = (values: Float32Array[], shapes: number[][]) => values.map((v, i) => tf.variable(tf.tensor(v, shapes[i]), false));
/** Member r's gradient of model parameter i at step s. */
export const memberGrad = (s: number, r: number, i: number, shape: number[]) => noise(size(shape), 1000 * s + 37 * r + i + 1);

/** One process over `steps` steps: the members' gradients summed, clipped over the whole model, the plain optimizer. */
export function reference(members: number, steps: number, config: OptimizerConfig, clipNorm?: number) {
  const params = variables(initialValues(), SHAPES);
  const optimizer = createOptimizer(config);
  for (let s = 0; s < steps; s++) {
    const grads = SHAPES.map((shape, i) => {
      const sum = new Float32Array(size(shape));
      for (let r = 0; r < members; r++) {
        const g = memberGrad(s, r, i, shape);
        for (let e = 0; e < sum.length; e++) sum[e] += g[e];
      }
      return tf.tensor(sum, shape);
    });
    optimizer.apply(params, clipNorm === undefined ? grads : clipByGlobalNorm(grads, clipNorm));
  }
  const values = params.map((p) => (p.dataSync() as Float32Array).slice());
  const state = optimizer.exportState();
  params.forEach((p) => p.dispose());
  optimizer.dispose();
  return { values, state };
}

export interface Member {
  sync: GradientSync;
  params: tf.Variable[];
  /** indices[i]: which of the model's parameters this member's parameter i is (a stage holds some). */
  indices: number[];
  replica: number;
}

/** Steps [from, from + steps) on every member at once; gradients arrive in reverse parameter order, as from a backward pass. */
export async function train(members: Member[], from: number, steps: number): Promise<SyncTimings[]> {
  const timings: SyncTimings[] = [];
  for (let s = from; s < from + steps; s++) {
    for (const m of members) {
      for (let i = m.params.length - 1; i >= 0; i--) {
        const shape = m.params[i].shape;
        m.sync.gradReady(i, tf.tensor(memberGrad(s, m.replica, m.indices[i], shape), shape));
      }
    }
    timings.push(...(await Promise.all(members.map((m) => m.sync.finish(s)))));
  }
  return timings;
}
