import { mixSeeds, seededPermutation } from '../util/prng.js';

/**
 * Data order is a function of (seed, epoch, step) only: every process that needs a sample of step t
 * computes the same indices without talking to anyone, and a resized or restarted job sees exactly the
 * data an uninterrupted one would.
 */
export function stepsPerEpoch(trainSize: number, globalBatch: number): number {
  if (globalBatch > trainSize) throw new Error(`The global batch ${globalBatch} is larger than the ${trainSize} training samples.`);
  // As model.fit: the rows left over after the full batches are one more, smaller step.
  return Math.ceil(trainSize / globalBatch);
}

/**
 * The epoch's permutation of the training set, kept for the epoch: agents ask for a micro-batch's
 * indices on every forward pass of the first and last stages, and shuffling MNIST's 60,000 indices
 * each time costs 0.6 ms here, on the pipeline's critical path. Never handed out: callers get copies.
 */
let cached: { key: string; permutation: Uint32Array } | null = null;
function epochPermutation(seed: number, epoch: number, trainSize: number): Uint32Array {
  const key = `${seed}/${epoch}/${trainSize}`;
  if (cached?.key !== key) cached = { key, permutation: seededPermutation(trainSize, mixSeeds('data-order', seed, epoch)) };
  return cached.permutation;
}

/**
 * Indices into the training set of the global batch of step `step` (0-based, counted across epochs); a
 * fresh array. The epoch's last step holds the rows left over (fewer than the global batch when the
 * batch does not divide the training set), as model.fit's last batch does.
 */
export function globalBatchIndices(seed: number, step: number, globalBatch: number, trainSize: number, shuffle = true): Uint32Array {
  const perEpoch = stepsPerEpoch(trainSize, globalBatch);
  const epoch = Math.floor(step / perEpoch);
  const offset = (step % perEpoch) * globalBatch;
  const rows = Math.min(globalBatch, trainSize - offset);
  if (!shuffle) return Uint32Array.from({ length: rows }, (_, i) => offset + i);
  return epochPermutation(seed, epoch, trainSize).slice(offset, offset + rows);
}

/**
 * Rows [start, end) of slice `index` when a step's `rows` rows are split into `slices` (a plan's
 * virtual nodes × micro-batches, in that order): consecutive runs whose sizes differ by at most one,
 * so a full step gives every slice the same rows as before and a partial last step is split by rows.
 * Every plan with the same slicing cuts a step the same way, whatever its devices.
 */
export function sliceBounds(rows: number, slices: number, index: number): [number, number] {
  if (rows < slices) {
    throw new Error(`A step of ${rows} rows (the epoch's last, partial batch) cannot be split into the plan's ${slices} slices (virtual nodes × micro-batches): give each at least one row — choose a global batch that leaves at least ${slices} rows over, or fewer micro-batches.`);
  }
  const base = Math.floor(rows / slices);
  const extra = rows % slices;
  const start = index * base + Math.min(index, extra);
  return [start, start + base + (index < extra ? 1 : 0)];
}
