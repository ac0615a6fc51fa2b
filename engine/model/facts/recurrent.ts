import type { LayerSpec, RecurrentSpec } from '../layerSpec.js';
import { facts, inputOfRank, onlyInput, type LayerFacts } from './common.js';

const GATES: Record<RecurrentSpec['cell'], number> = { lstm: 4, gru: 3, simpleRnn: 1 };

/**
 * Recurrent layers over a [steps, features] input. Each gate has an input kernel, a recurrent kernel and
 * a bias; GRU with `resetAfter` (Keras 2's default, unsupported by tfjs) has a second, recurrent bias.
 */
export function recurrentFacts(spec: RecurrentSpec, inputs: number[][]): LayerFacts {
  const [steps, features] = inputOfRank(spec.cell, inputs, 2, '[steps, features]');
  const gates = GATES[spec.cell];
  const u = spec.units;
  const biases = spec.useBias ? (spec.cell === 'gru' && spec.resetAfter ? 2 : 1) * u : 0;
  const params = gates * (u * (features + u) + biases);
  return facts(spec.returnSequences ? [steps, u] : [u], params, 2 * steps * gates * u * (features + u));
}

/** A recurrent layer run forwards and backwards, its two outputs merged. */
export function bidirectionalFacts(spec: Extract<LayerSpec, { kind: 'bidirectional' }>, inputs: number[][]): LayerFacts {
  const one = recurrentFacts(spec.layer, inputs);
  const outputShape = [...one.outputShape];
  if (spec.mergeMode === 'concat') outputShape[outputShape.length - 1] *= 2;
  const merge = spec.mergeMode === 'concat' ? 0 : one.outputShape.reduce((a, b) => a * b, 1);
  return facts(outputShape, 2 * one.params, 2 * one.forwardFlops + merge);
}

/** A layer applied to every step of a [steps, ...] input with shared weights. */
export function timeDistributedFacts(
  spec: Extract<LayerSpec, { kind: 'timeDistributed' }>,
  inputs: number[][],
  inner: (spec: LayerSpec, inputs: number[][]) => LayerFacts,
): LayerFacts {
  const [steps, ...rest] = onlyInput('timeDistributed', inputs);
  if (rest.length === 0) throw new Error(`timeDistributed needs a [steps, ...] input, got [${inputs[0]}].`);
  const one = inner(spec.layer, [rest]);
  return {
    outputShape: [steps, ...one.outputShape],
    params: one.params,
    nonTrainableParams: one.nonTrainableParams,
    forwardFlops: steps * one.forwardFlops,
    backwardFlops: steps * one.backwardFlops,
  };
}
