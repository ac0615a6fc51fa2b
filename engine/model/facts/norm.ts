import type { LayerSpec } from '../layerSpec.js';
import { facts, normaliseAxis, onlyInput, product, type LayerFacts } from './common.js';

type NormSpec = Extract<LayerSpec, { kind: 'batchNorm' | 'layerNorm' | 'dropout' }>;

/** Normalisation and dropout keep their input's shape; FLOPs are a handful per element. */
export function normFacts(spec: NormSpec, inputs: number[][]): LayerFacts {
  const input = onlyInput(spec.kind, inputs);
  const elements = product(input);
  switch (spec.kind) {
    case 'batchNorm': {
      const channels = input[normaliseAxis(spec.axis, input.length)];
      const affine = (spec.scale ? channels : 0) + (spec.center ? channels : 0);
      // Subtract, scale by the inverse deviation, multiply by gamma, add beta.
      const out = facts([...input], affine, 4 * elements, 2 * channels);
      return { ...out, backwardFlops: 2 * out.forwardFlops };
    }
    case 'layerNorm': {
      const features = product(spec.axes.map((a) => input[normaliseAxis(a, input.length)]));
      const affine = (spec.scale ? features : 0) + (spec.center ? features : 0);
      // Mean and variance over the features, then normalise, scale and shift.
      const out = facts([...input], affine, 8 * elements);
      return { ...out, backwardFlops: 2 * out.forwardFlops };
    }
    case 'dropout':
      return facts([...input], 0, elements);
  }
}
