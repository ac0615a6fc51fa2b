import * as tf from '@tensorflow/tfjs-core';
import type { OutputLoss } from '../../engine/model/trainingSpec.js';

/**
 * Keras's losses, computed with the ops tfjs-layers uses (losses.js) so that a stage's gradients equal
 * those of a tfjs `model.fit` on the same model. On probabilities: categorical cross-entropy divides by
 * the class sum and clips to [epsilon, 1 - epsilon] (epsilon 1e-7, tfjs's float32 fuzz); the sparse one
 * clips first as well; binary cross-entropy turns the clipped probability back into a logit. From logits,
 * the categorical losses use log-softmax (TensorFlow's softmax_cross_entropy_with_logits: exact where
 * tfjs's softmax -> clip -> log would flatten probabilities under 1e-7) and binary uses the stable
 * sigmoid cross-entropy. Only ops with CPU and WASM kernels and gradients are used (one-hot, not gather).
 */
const EPSILON = 1e-7;

/** Loss per position: the output's shape without its last axis. */
function lossPerPosition(spec: OutputLoss, output: tf.Tensor, target: tf.Tensor): tf.Tensor {
  switch (spec.loss) {
    case 'meanSquaredError':
      return tf.mean(tf.square(tf.sub(output, sameShape(target, output, spec))), -1);
    case 'meanAbsoluteError':
      return tf.mean(tf.abs(tf.sub(output, sameShape(target, output, spec))), -1);
    case 'binaryCrossentropy': {
      let logits = output;
      if (!spec.fromLogits) {
        const p = tf.clipByValue(output, EPSILON, 1 - EPSILON);
        logits = tf.log(tf.div(p, tf.sub(1, p)));
      }
      return tf.mean(sigmoidCrossEntropy(sameShape(target, output, spec), logits), -1);
    }
    case 'categoricalCrossentropy':
    case 'sparseCategoricalCrossentropy': {
      const sparse = spec.loss === 'sparseCategoricalCrossentropy';
      const oneHot = oneHotTarget(target, output, spec, sparse);
      let logProbs: tf.Tensor;
      if (spec.fromLogits) logProbs = tf.logSoftmax(output);
      else {
        // tfjs's sparse loss clips before its categorical loss normalises (and clips again).
        const p = sparse ? tf.clipByValue(output, EPSILON, 1 - EPSILON) : output;
        const normalised = tf.div(p, tf.sum(p, -1, true));
        logProbs = tf.log(tf.clipByValue(normalised, EPSILON, 1 - EPSILON));
      }
      return tf.neg(tf.sum(tf.mul(oneHot, logProbs), -1));
    }
  }
}

/** max(x, 0) - x z + log(1 + exp(-|x|)): tfjs-layers' sigmoidCrossEntropyWithLogits. */
function sigmoidCrossEntropy(labels: tf.Tensor, logits: tf.Tensor): tf.Tensor {
  return tf.add(tf.sub(tf.relu(logits), tf.mul(logits, labels)), tf.log1p(tf.exp(tf.neg(tf.abs(logits)))));
}

function shapeError(spec: OutputLoss, output: tf.Tensor, target: tf.Tensor, expected: string): Error {
  return new Error(`Output "${spec.output}" (${spec.loss}): targets of shape [${target.shape.join(', ')}] do not fit outputs of shape [${output.shape.join(', ')}]; expected ${expected}.`);
}

/** Regression and binary targets: as many values as the output (e.g. [rows] for a [rows, 1] output). */
function sameShape(target: tf.Tensor, output: tf.Tensor, spec: OutputLoss): tf.Tensor {
  if (target.size !== output.size) throw shapeError(spec, output, target, 'one target value per output value');
  return target.shape.length === output.shape.length && target.shape.every((d, i) => d === output.shape[i]) ? target : tf.reshape(target, output.shape);
}

/**
 * One-hot targets shaped like the output. Class indices (one per position, as floats) are expanded;
 * one-hot rows pass through. A sparse loss prefers indices, a categorical one one-hot rows.
 */
function oneHotTarget(target: tf.Tensor, output: tf.Tensor, spec: OutputLoss, sparse: boolean): tf.Tensor {
  const classes = output.shape[output.shape.length - 1];
  const asIndices = target.size * classes === output.size && (sparse || target.size !== output.size);
  if (asIndices) {
    const indices = tf.cast(tf.floor(tf.reshape(target, [-1])), 'int32') as tf.Tensor1D;
    return tf.reshape(tf.cast(tf.oneHot(indices, classes), 'float32'), output.shape);
  }
  if (target.size === output.size) return tf.reshape(target, output.shape);
  throw shapeError(spec, output, target, 'a class index per position or one-hot rows');
}

/**
 * The loss summed over the batch rows, divided by `divisor`, times the output's loss weight. Each row's
 * loss is averaged over its non-batch positions as Keras does (a sequence output's loss is the mean over
 * time steps), so with `divisor` the global batch, the gradients of all micro-batches and replicas add up
 * to the gradient of Keras's mean loss over the global batch.
 */
export function lossSum(spec: OutputLoss, output: tf.Tensor, target: tf.Tensor, divisor: number): tf.Scalar {
  return tf.tidy(() => {
    const perPosition = lossPerPosition(spec, output, target);
    const rows = output.shape[0];
    const positions = rows > 0 ? perPosition.size / rows : 1;
    const mean = tf.div(tf.sum(perPosition), positions * divisor);
    return (spec.weight === 1 ? mean : tf.mul(mean, spec.weight)) as tf.Scalar;
  });
}

export interface CorrectCount {
  correct: number;
  /** Rows, positions of a sequence output, or values of a binary output counted; 0 for regression. */
  count: number;
}

/**
 * What the output's accuracy metric counts correct: arg-max against the class index (sparse) or the
 * target's arg-max (categorical), and each value thresholded at 0.5 (0 for logits) against the target
 * rounded at 0.5 (binary). Regression outputs have no accuracy: { correct: 0, count: 0 }.
 */
export function correctCount(spec: OutputLoss, output: tf.Tensor, target: tf.Tensor): CorrectCount {
  if (spec.metric === null) return { correct: 0, count: 0 };
  return tf.tidy(() => {
    let hits: tf.Tensor;
    if (spec.metric === 'binaryAccuracy') {
      const predicted = tf.greater(output, spec.fromLogits ? 0 : 0.5);
      hits = tf.equal(predicted, tf.greater(sameShape(target, output, spec), 0.5));
    } else {
      const classes = output.shape[output.shape.length - 1];
      const predicted = tf.argMax(output, -1);
      const sparse = spec.metric === 'sparseCategoricalAccuracy';
      let truth: tf.Tensor;
      if (target.size * classes === output.size && (sparse || target.size !== output.size)) {
        truth = tf.reshape(tf.cast(tf.floor(target), 'int32'), predicted.shape);
      } else if (target.size === output.size) {
        truth = tf.argMax(tf.reshape(target, output.shape), -1);
      } else throw shapeError(spec, output, target, 'a class index per position or one-hot rows');
      hits = tf.equal(predicted, truth);
    }
    const correct = tf.sum(tf.cast(hits, 'int32')).dataSync()[0];
    return { correct, count: hits.size };
  });
}
