import { mixSeeds, seededPermutation } from '../../util/prng.js';
import { type DataSplit, type RowSource, emptySplit, splitOf } from './dataset.js';

/**
 * The train and validation splits of one set of samples: with `validationSplit` F, a seeded random
 * fraction held out (the same rule and seed stream as the NumPy folder's, so it is recorded by the
 * run's seed); without it every sample trains and the validation split is empty.
 */
export function heldOutSplits(label: string, total: number, sources: ReadonlyMap<string, RowSource>, validationSplit: number | undefined, seed: number):
  { train: DataSplit; validation: DataSplit; note: string } {
  const F = validationSplit;
  if (F === undefined || F === 0) {
    return { train: splitOf(`${label} train`, total, sources), validation: emptySplit(`${label} validation`, [...sources.keys()]), note: `train ${total}, no validation` };
  }
  if (!(F > 0 && F < 1)) throw new Error(`validationSplit ${F} must be a fraction between 0 and 1 (e.g. 0.2 holds out 20% of ${label}'s samples).`);
  const held = Math.max(1, Math.round(F * total));
  if (held >= total) throw new Error(`${label}: validationSplit ${F} of ${total} samples leaves none to train on; use a smaller fraction or more data.`);
  const perm = seededPermutation(total, mixSeeds('validation-split', seed));
  // Ascending, so consecutive split indices mostly map to consecutive rows of the file.
  const valRows = perm.slice(0, held).sort();
  const trainRows = perm.slice(held).sort();
  return {
    train: splitOf(`${label} train`, total - held, sources, trainRows),
    validation: splitOf(`${label} validation`, held, sources, valRows),
    note: `train ${total - held}, validation ${held} held out by seed ${seed}`,
  };
}
