import * as tf from '@tensorflow/tfjs-core';
import type { TensorGroup } from './tensorGroup.js';

/**
 * Softmax cross-entropy over logits split by class (S1), without ever gathering them (Whale's
 * class-dimension sharding, for classifiers with 100k classes): each shard sends only a per-row max,
 * a per-row sum of exponentials and the label's logit where it owns the label's class.
 *   loss_r = m_r + log Σ_k Σ_c exp(z_rc − m_r) − z_r,label       (m_r: the row's max over all shards)
 *   ∂loss/∂z = (softmax(z) − onehot) / divisor, computed on each shard for its own classes.
 * `labels` are the class indices of all rows; the result is identical on every shard.
 */
export async function shardedCrossEntropy(
  group: TensorGroup,
  logits: tf.Tensor,
  labels: Int32Array,
  divisor: number,
): Promise<{ lossSum: number; dLogits: tf.Tensor; rowLoss: Float32Array }> {
  const [rows, width] = logits.shape as [number, number];
  const offset = group.index * width;
  const localMax = tf.tidy(() => tf.max(logits, 1).dataSync() as Float32Array);
  const maxes = await group.allGatherVectors(localMax);
  const rowMax = new Float32Array(rows).fill(-Infinity);
  for (const m of maxes) for (let r = 0; r < rows; r++) rowMax[r] = Math.max(rowMax[r], m[r]);

  const shifted = tf.tidy(() => tf.exp(tf.sub(logits, tf.tensor2d(rowMax, [rows, 1]))));
  const z = logits.dataSync() as Float32Array;
  // One all-reduce carries both per-row sums: Σ exp over this shard's classes, and the label's logit.
  const sums = new Float32Array(2 * rows);
  sums.set(tf.tidy(() => tf.sum(shifted, 1).dataSync() as Float32Array));
  const oneHot = new Float32Array(rows * width);
  for (let r = 0; r < rows; r++) {
    const c = labels[r] - offset;
    if (c >= 0 && c < width) {
      sums[rows + r] = z[r * width + c];
      oneHot[r * width + c] = 1;
    }
  }
  await group.sumInPlace(sums);

  const rowLoss = new Float32Array(rows);
  let lossSum = 0;
  for (let r = 0; r < rows; r++) {
    rowLoss[r] = rowMax[r] + Math.log(sums[r]) - sums[rows + r];
    lossSum += rowLoss[r];
  }
  const dLogits = tf.tidy(() => {
    const softmax = tf.div(shifted, tf.tensor2d(sums.subarray(0, rows), [rows, 1]));
    return tf.div(tf.sub(softmax, tf.tensor2d(oneHot, [rows, width])), divisor);
  });
  shifted.dispose();
  return { lossSum: lossSum / divisor, dLogits, rowLoss };
}

/** Rows whose arg-max over all shards' classes is the label: each shard sends its best class and score. */
export async function shardedCorrect(group: TensorGroup, logits: tf.Tensor, labels: Int32Array): Promise<number> {
  const [rows, width] = logits.shape as [number, number];
  const [localMax, localArg] = tf.tidy(() => [tf.max(logits, 1).dataSync() as Float32Array, tf.argMax(logits, 1).dataSync() as Int32Array]);
  const maxes = await group.allGatherVectors(localMax);
  const args = await group.allGatherVectors(Float32Array.from(localArg, (a) => a + group.index * width));
  let correct = 0;
  for (let r = 0; r < rows; r++) {
    // Ties go to the lowest class, as argMax over the whole row would decide.
    let best = 0;
    for (let k = 1; k < group.size; k++) if (maxes[k][r] > maxes[best][r]) best = k;
    if (args[best][r] === labels[r]) correct += 1;
  }
  return correct;
}
