/**
 * Synthetic data of the model's shapes, for runs without a dataset (throughput tests, smoke runs).
 *
 * As in Megatron-LM's and DeepSpeed's mock datasets, each sample is a pure function of (seed, split,
 * array, index): a gather generates just the requested rows, so every agent sees the same sample for
 * the same index without the set ever being materialised, whatever its size.
 */
import { mixSeeds, mulberry32 } from '../../util/prng.js';
import { type ArraySpec, type Dataset, type RowSource, rowSizeOf, splitOf } from './dataset.js';

export interface SyntheticSpec extends ArraySpec {
  /**
   * Inclusive integer range [min, max] of the values: token ids of an int32 input ([0, vocab - 1])
   * or class labels of a target ([0, classes - 1]). Without it values are floats uniform in [0, 1).
   */
  range?: [number, number];
}

export interface SyntheticWants {
  inputs: SyntheticSpec[];
  targets: SyntheticSpec[];
}

export interface SyntheticOptions {
  /** Training samples (default 1024). */
  samples?: number;
  /** Validation samples (default 256). */
  validation?: number;
  seed: number;
}

function generator(spec: SyntheticSpec, role: 'input' | 'target', seed: number, split: string): RowSource {
  if (spec.shape.some((d) => !Number.isInteger(d) || d < 0)) {
    throw new Error(`Synthetic data: '${spec.name}' has shape [${spec.shape.join(', ')}]; every dim needs a fixed size to generate samples.`);
  }
  const rowSize = rowSizeOf(spec.shape);
  const range = spec.range;
  if (role === 'input' && spec.dtype === 'int32' && !range) {
    throw new Error(`Synthetic data: model input '${spec.name}' takes int32 ids (an Embedding's tokens); give its spec a range [0, inputDim - 1].`);
  }
  if (range && !(Number.isInteger(range[0]) && Number.isInteger(range[1]) && range[0] <= range[1])) {
    throw new Error(`Synthetic data: '${spec.name}' has range [${range.join(', ')}]; it must be two integers, min ≤ max.`);
  }
  const span = range ? range[1] - range[0] + 1 : 0;
  return {
    rowSize,
    readRows(indices, out, outOffset, outStride) {
      for (let r = 0; r < indices.length; r++) {
        const rand = mulberry32(mixSeeds('synthetic', seed, split, spec.name, indices[r]));
        const at = outOffset + r * outStride;
        if (range) for (let j = 0; j < rowSize; j++) out[at + j] = range[0] + Math.floor(rand() * span);
        else for (let j = 0; j < rowSize; j++) out[at + j] = rand();
      }
    },
  };
}

/** Deterministic random inputs and targets of the model's shapes. */
export function syntheticDataset(wants: SyntheticWants, options: SyntheticOptions): Dataset {
  const samples = options.samples ?? 1024;
  const validation = options.validation ?? 256;
  for (const [what, n] of [['samples', samples], ['validation', validation]] as const) {
    if (!Number.isInteger(n) || n < 0) throw new Error(`Synthetic data: ${what} must be a whole number ≥ 0, got ${n}.`);
  }
  if (samples === 0) throw new Error('Synthetic data: samples must be at least 1.');
  const all = [
    ...wants.inputs.map((spec) => ({ spec, role: 'input' as const })),
    ...wants.targets.map((spec) => ({ spec, role: 'target' as const })),
  ];
  const sources = (split: string) => new Map(all.map(({ spec, role }) => [spec.name, generator(spec, role, options.seed, split)]));
  return {
    describe: `synthetic data (train ${samples}, validation ${validation}, seed ${options.seed})`,
    arrays: all.map(({ spec }) => ({
      name: spec.name,
      shape: [...spec.shape],
      dtype: spec.range ? 'int32' : 'float32',
    })),
    train: splitOf('synthetic train', samples, sources('train')),
    validation: splitOf('synthetic validation', validation, sources('validation')),
    close: () => undefined,
  };
}
