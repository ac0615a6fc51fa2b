import type { LayerSpec } from '../layerSpec.js';
import { facts, inputOfRank, onlyInput, product, type LayerFacts } from './common.js';

type ShapeSpec = Extract<
  LayerSpec,
  { kind: 'flatten' | 'reshape' | 'permute' | 'activation' | 'zeroPadding2d' | 'cropping1d' | 'cropping2d' | 'upSampling2d' }
>;

/** Layers that move or pad data without parameters. Copies count one FLOP per output element. */
export function shapeFacts(spec: ShapeSpec, inputs: number[][]): LayerFacts {
  const input = onlyInput(spec.kind, inputs);
  switch (spec.kind) {
    case 'flatten':
      return facts([product(input)], 0, 0);
    case 'reshape':
      if (product(spec.targetShape) !== product(input)) {
        throw new Error(`reshape to [${spec.targetShape}] does not keep the ${product(input)} elements of [${input}].`);
      }
      return facts([...spec.targetShape], 0, 0);
    case 'permute': {
      const sorted = [...spec.dims].sort((a, b) => a - b);
      if (sorted.length !== input.length || sorted.some((d, i) => d !== i + 1)) {
        throw new Error(`permute dims [${spec.dims}] are not a permutation of 1..${input.length}.`);
      }
      return facts(spec.dims.map((d) => input[d - 1]), 0, product(input));
    }
    case 'activation':
      return facts([...input], 0, product(input));
    case 'zeroPadding2d': {
      const [h, w, c] = inputOfRank('zeroPadding2d', inputs, 3, '[height, width, channels]');
      const [[top, bottom], [left, right]] = spec.padding;
      const out = [h + top + bottom, w + left + right, c];
      return facts(out, 0, product(out));
    }
    case 'cropping1d': {
      const [steps, c] = inputOfRank('cropping1d', inputs, 2, '[steps, channels]');
      const kept = steps - spec.cropping[0] - spec.cropping[1];
      if (kept <= 0) throw new Error(`cropping1d removes ${steps - kept} of ${steps} steps, leaving none.`);
      return facts([kept, c], 0, kept * c);
    }
    case 'cropping2d': {
      const [h, w, c] = inputOfRank('cropping2d', inputs, 3, '[height, width, channels]');
      const [[top, bottom], [left, right]] = spec.cropping;
      const out = [h - top - bottom, w - left - right, c];
      if (out[0] <= 0 || out[1] <= 0) throw new Error(`cropping2d removes more than the ${h}×${w} input has.`);
      return facts(out, 0, product(out));
    }
    case 'upSampling2d': {
      const [h, w, c] = inputOfRank('upSampling2d', inputs, 3, '[height, width, channels]');
      const out = [h * spec.size[0], w * spec.size[1], c];
      return facts(out, 0, product(out));
    }
  }
}
