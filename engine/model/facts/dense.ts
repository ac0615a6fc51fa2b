import type { LayerSpec } from '../layerSpec.js';
import { facts, onlyInput, product, type LayerFacts } from './common.js';

type DenseSpec = Extract<LayerSpec, { kind: 'dense' | 'denseNd' }>;

/**
 * Dense layers. The agents' `dense` takes a flat input; `denseNd` applies to the last axis of any input,
 * so its work repeats over the leading axes (a token-wise projection in a transformer).
 */
export function denseFacts(spec: DenseSpec, inputs: number[][]): LayerFacts {
  const input = onlyInput(spec.kind, inputs);
  if (spec.kind === 'dense' && input.length !== 1) {
    throw new Error(`A dense layer needs a flat input, got shape [${input}]; add a flatten layer before it.`);
  }
  if (input.length === 0) throw new Error(`${spec.kind} needs at least one axis, got a scalar input.`);
  const fanIn = input[input.length - 1];
  const repeats = product(input.slice(0, -1));
  const useBias = spec.kind === 'dense' || spec.useBias;
  const kernel = spec.kind === 'denseNd' && spec.tiedTo !== undefined ? 0 : fanIn * spec.units;
  const macs = repeats * fanIn * spec.units;
  const out = facts([...input.slice(0, -1), spec.units], kernel + (useBias ? spec.units : 0), 2 * macs);
  // A tied kernel has no parameters here, yet its gradient is still computed: keep backward at 2x.
  return { ...out, backwardFlops: 2 * out.forwardFlops };
}

/** Embedding lookups and learned positions: a gather forward, a scatter-add of gradients backward. */
export function embeddingFacts(spec: Extract<LayerSpec, { kind: 'embedding' | 'positionEmbedding' }>, inputs: number[][]): LayerFacts {
  const input = onlyInput(spec.kind, inputs);
  if (spec.kind === 'embedding') {
    const outputShape = [...input, spec.outputDim];
    return { ...facts(outputShape, spec.inputDim * spec.outputDim, 0), backwardFlops: product(outputShape) };
  }
  if (input.length !== 2) throw new Error(`positionEmbedding needs a [sequence, features] input, got [${input}].`);
  const [length, features] = input;
  if (length > spec.maxLength) throw new Error(`positionEmbedding holds ${spec.maxLength} positions, the input has ${length}.`);
  return facts([...input], spec.maxLength * features, product(input));
}
