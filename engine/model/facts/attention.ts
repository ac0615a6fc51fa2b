import type { LayerSpec } from '../layerSpec.js';
import { facts, type LayerFacts } from './common.js';

/**
 * Keras MultiHeadAttention over inputs [query, value, key?], each [steps, features]. Parameters follow
 * its four EinsumDense projections: query d_q·h·k (+h·k bias), key d_k·h·k (+h·k), value d_v·h·v (+h·v),
 * output h·v·d_out (+d_out); with d = h·k = h·v = d_out that is BERT's 4(d² + d).
 */
export function attentionFacts(spec: Extract<LayerSpec, { kind: 'multiHeadAttention' }>, inputs: number[][]): LayerFacts {
  if (inputs.length < 2 || inputs.length > 3) throw new Error(`multiHeadAttention takes query, value and an optional key, got ${inputs.length} inputs.`);
  if (inputs.some((s) => s.length !== 2)) throw new Error(`multiHeadAttention needs [steps, features] inputs, got ${inputs.map((s) => `[${s}]`).join(', ')}.`);
  const [[tq, dq], [tv, dv]] = inputs;
  const [tk, dk] = inputs[2] ?? inputs[1];
  if (tk !== tv) throw new Error(`multiHeadAttention key has ${tk} steps, value ${tv}.`);
  const { numHeads: h, keyDim: k, valueDim: v } = spec;
  const dOut = spec.outputDim ?? dq;
  const b = spec.useBias ? 1 : 0;
  const params = dq * h * k + b * h * k + dk * h * k + b * h * k + dv * h * v + b * h * v + h * v * dOut + b * dOut;
  const projections = tq * dq * h * k + tk * dk * h * k + tv * dv * h * v + tq * h * v * dOut;
  // Scores Q·Kᵀ and the weighted sum over values; a causal mask still computes the full score matrix.
  const mixing = h * tq * tk * k + h * tq * tv * v;
  const softmax = 5 * h * tq * tk;
  return facts([tq, dOut], params, 2 * (projections + mixing) + softmax);
}
