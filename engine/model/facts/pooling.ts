import type { LayerSpec } from '../layerSpec.js';
import { facts, inputOfRank, product, windowOutputSizes, type LayerFacts } from './common.js';

type PoolSpec = Extract<LayerSpec, { kind: 'maxPool2d' | 'pool' | 'globalPool' }>;

/** Pooling: one compare or add per window element; no parameters. */
export function poolingFacts(spec: PoolSpec, inputs: number[][]): LayerFacts {
  switch (spec.kind) {
    case 'maxPool2d': {
      const [h, w, c] = inputOfRank('maxPool2d', inputs, 3, '[height, width, channels]');
      const out = windowOutputSizes('maxPool2d window', [h, w], spec.poolSize, spec.strides, 'valid');
      return facts([...out, c], 0, product(out) * c * product(spec.poolSize));
    }
    case 'pool': {
      const name = `${spec.op}Pool${spec.rank}d`;
      const input = inputOfRank(name, inputs, spec.rank + 1, spec.rank === 1 ? '[steps, channels]' : '[height, width, channels]');
      const c = input[spec.rank];
      const out = windowOutputSizes(`${name} window`, input.slice(0, spec.rank), spec.poolSize, spec.strides, spec.padding);
      return facts([...out, c], 0, product(out) * c * product(spec.poolSize));
    }
    case 'globalPool': {
      const name = `global${spec.op === 'max' ? 'Max' : 'Average'}Pool${spec.rank}d`;
      const input = inputOfRank(name, inputs, spec.rank + 1, spec.rank === 1 ? '[steps, channels]' : '[height, width, channels]');
      return facts([input[spec.rank]], 0, product(input));
    }
  }
}
