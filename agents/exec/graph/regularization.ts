import * as tf from '@tensorflow/tfjs-core';
import type * as tfl from '@tensorflow/tfjs-layers/dist/index.js';

/** One weight regularizer's penalty as tfjs-layers built it: `regularizer.apply(weight)`, a scalar. */
export type RegularizationTerm = () => tf.Scalar;

/** Where a layer keeps the layers (or RNN cells) whose weights it holds: RNN cells, wrappers. */
const INNER = ['cell', 'cells', 'layer', 'forwardLayer', 'backwardLayer'] as const;

/**
 * The weight-regularization penalties of a stage's layers (Keras's `kernel_regularizer`,
 * `bias_regularizer`, `embeddings_regularizer`, …), each counted once. tfjs-layers builds them: every
 * weight added with a regularizer adds `() => regularizer.apply(weight)` to its layer's `losses`, and
 * `model.fit` adds `model.calculateLosses()` to the loss. Two things Shoal does as Keras does rather than
 * as tfjs 4.22's `model.fit` (measured): a shared layer's penalty counts once, not once per call, and
 * an RNN's cell penalties (LSTM/GRU/SimpleRNN's kernel, recurrent and bias regularizers, inside
 * Bidirectional too) count — tfjs's RNN layer does not pass its cell's `losses` on, so `fit` drops them.
 */
export function regularizationTerms(layers: Iterable<tfl.layers.Layer>): RegularizationTerm[] {
  const terms = new Set<RegularizationTerm>();
  const seen = new Set<object>();
  const visit = (owner: unknown) => {
    if (owner === null || typeof owner !== 'object' || seen.has(owner)) return;
    seen.add(owner);
    if (Array.isArray(owner)) return owner.forEach(visit);
    const losses = (owner as { losses?: unknown }).losses;
    if (Array.isArray(losses)) for (const term of losses) if (typeof term === 'function') terms.add(term as RegularizationTerm);
    for (const key of INNER) visit((owner as Record<string, unknown>)[key]);
  };
  for (const layer of layers) visit(layer);
  return [...terms];
}

/** The sum of the penalties (ops only: call inside tf.tidy or a tape). */
export function regularizationSum(terms: RegularizationTerm[]): tf.Scalar {
  const values = terms.map((term) => term());
  return (values.length === 1 ? values[0] : tf.addN(values)) as tf.Scalar;
}
