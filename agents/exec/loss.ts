import * as tf from '@tensorflow/tfjs-core';

/**
 * Softmax cross-entropy summed over the samples given and divided by the *global* batch size. Dividing
 * by the global batch (not the micro-batch) makes the gradients of all micro-batches and replicas simply
 * add up to the gradient of the mean loss over the global batch: the synchronous invariant.
 */
export function crossEntropySum(logits: tf.Tensor, labels: tf.Tensor, divisor: number): tf.Scalar {
  const logProbs = tf.logSoftmax(logits as tf.Tensor2D);
  const picked = tf.sum(tf.mul(logProbs, labels));
  return tf.div(tf.neg(picked), divisor) as tf.Scalar;
}

/** Number of rows whose arg-max matches the label. */
export function countCorrect(logits: tf.Tensor, labels: tf.Tensor): number {
  return tf.tidy(() => tf.sum(tf.cast(tf.equal(tf.argMax(logits, 1), tf.argMax(labels, 1)), 'int32')).arraySync() as number);
}
