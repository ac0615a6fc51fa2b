import { mixSeeds, seededPermutation } from '../../util/prng.js';
import type { ValidationHoldOut } from '../../data/datasetDescription.js';
import { type DataSplit, type RowSource, emptySplit, splitOf } from './dataset.js';

/**
 * Which rows a validation split of F holds out, of `total`:
 * - 'last' (the default): the last rows, as tfjs's and Keras's `model.fit(validationSplit)` take them
 *   (training keeps the first floor(total × (1 − F)));
 * - 'seededRandom': a random fraction drawn from the run's seed (recorded with the run), for files
 *   sorted by class or time, where the last rows would not be a fair sample.
 * Both row lists ascending, so consecutive split indices map to consecutive file rows (one read).
 */
export function heldOutRows(label: string, total: number, F: number, holdOut: ValidationHoldOut, seed: number): { trainRows: Uint32Array; valRows: Uint32Array; note: string } {
  if (!(F > 0 && F < 1)) throw new Error(`validationSplit ${F} must be a fraction between 0 and 1 (e.g. 0.2 holds out 20% of ${label}'s samples).`);
  const held = holdOut === 'last' ? total - Math.floor(total * (1 - F)) : Math.max(1, Math.round(F * total));
  if (held >= total) throw new Error(`${label}: validationSplit ${F} of ${total} samples leaves none to train on; use a smaller fraction or more data.`);
  if (held < 1) throw new Error(`${label}: validationSplit ${F} of ${total} samples holds out no sample; use a larger fraction.`);
  if (holdOut === 'last') {
    const range = (from: number, to: number) => Uint32Array.from({ length: to - from }, (_, i) => from + i);
    return { trainRows: range(0, total - held), valRows: range(total - held, total), note: `train ${total - held}, validation the last ${held}` };
  }
  const perm = seededPermutation(total, mixSeeds('validation-split', seed));
  return { trainRows: perm.slice(held).sort(), valRows: perm.slice(0, held).sort(), note: `train ${total - held}, validation ${held} held out by seed ${seed}` };
}

/** The train and validation splits of one set of samples (heldOutRows); without a split every sample trains. */
export function heldOutSplits(label: string, total: number, sources: ReadonlyMap<string, RowSource>, validationSplit: number | undefined, seed: number, holdOut: ValidationHoldOut = 'last'):
  { train: DataSplit; validation: DataSplit; note: string } {
  if (validationSplit === undefined || validationSplit === 0) {
    return { train: splitOf(`${label} train`, total, sources), validation: emptySplit(`${label} validation`, [...sources.keys()]), note: `train ${total}, no validation` };
  }
  const { trainRows, valRows, note } = heldOutRows(label, total, validationSplit, holdOut, seed);
  return {
    train: splitOf(`${label} train`, trainRows.length, sources, trainRows),
    validation: splitOf(`${label} validation`, valRows.length, sources, valRows),
    note,
  };
}
