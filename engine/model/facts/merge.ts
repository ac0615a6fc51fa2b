import type { LayerSpec } from '../layerSpec.js';
import { facts, normaliseAxis, product, type LayerFacts } from './common.js';

/** Element-wise merges broadcast like Keras: equal ranks, and each axis equal or 1. */
export function mergeFacts(spec: Extract<LayerSpec, { kind: 'merge' }>, inputs: number[][]): LayerFacts {
  if (inputs.length < 2) throw new Error(`${spec.op} merges at least two inputs, got ${inputs.length}.`);
  const rank = inputs[0].length;
  if (inputs.some((s) => s.length !== rank)) throw new Error(`${spec.op} inputs differ in rank: ${inputs.map((s) => `[${s}]`).join(', ')}.`);
  const out = inputs[0].map((_, axis) => {
    const sizes = new Set(inputs.map((s) => s[axis]).filter((n) => n !== 1));
    if (sizes.size > 1) throw new Error(`${spec.op} inputs do not match: ${inputs.map((s) => `[${s}]`).join(', ')}.`);
    return sizes.size === 1 ? [...sizes][0] : 1;
  });
  return facts(out, 0, (inputs.length - 1) * product(out));
}

export function concatenateFacts(spec: Extract<LayerSpec, { kind: 'concatenate' }>, inputs: number[][]): LayerFacts {
  if (inputs.length < 2) throw new Error(`concatenate joins at least two inputs, got ${inputs.length}.`);
  const rank = inputs[0].length;
  const axis = normaliseAxis(spec.axis, rank);
  const fits = inputs.every((s) => s.length === rank && s.every((n, i) => i === axis || n === inputs[0][i]));
  if (!fits) throw new Error(`concatenate on axis ${spec.axis} needs inputs equal elsewhere: ${inputs.map((s) => `[${s}]`).join(', ')}.`);
  const out = [...inputs[0]];
  out[axis] = inputs.reduce((sum, s) => sum + s[axis], 0);
  return facts(out, 0, product(out));
}
