import { mixSeeds, seededPermutation } from '../util/prng.js';

/**
 * Data order is a function of (seed, epoch, step) only: every process that needs a sample of step t
 * computes the same indices without talking to anyone, and a resized or restarted job sees exactly the
 * data an uninterrupted one would.
 */
export function stepsPerEpoch(trainSize: number, globalBatch: number): number {
  const steps = Math.floor(trainSize / globalBatch);
  if (steps < 1) throw new Error(`The global batch ${globalBatch} is larger than the ${trainSize} training samples.`);
  return steps;
}

export function epochPermutation(seed: number, epoch: number, trainSize: number): Uint32Array {
  return seededPermutation(trainSize, mixSeeds('data-order', seed, epoch));
}

/** Indices into the training set of the global batch of step `step` (0-based, counted across epochs). */
export function globalBatchIndices(seed: number, step: number, globalBatch: number, trainSize: number): Uint32Array {
  const perEpoch = stepsPerEpoch(trainSize, globalBatch);
  const epoch = Math.floor(step / perEpoch);
  const offset = (step % perEpoch) * globalBatch;
  return epochPermutation(seed, epoch, trainSize).subarray(offset, offset + globalBatch);
}
