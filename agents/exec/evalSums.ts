import * as tf from '@tensorflow/tfjs-core';
import { addMergeableSums, CONFUSION_MATRIX_MAX_CLASSES, PER_CLASS_MAX_CLASSES, type ConfusionSums } from '../../engine/protocol/evaluation.js';
import { isAccuracy, type EvalMetric } from '../../engine/model/evalMetrics.js';
import type { OutputLoss } from '../../engine/model/trainingSpec.js';
import { correctCount, lossSum } from './losses.js';

/**
 * A last stage's share of an evaluation, as sums that add up over chunks, replicas and shards:
 * the weighted loss summed over rows, the first classifier output's accuracy counts, every metric's
 * sum and count, and the first classifier output's class counts (the confusion matrix).
 */
export interface EvalSums {
  /** What the accuracy counts correct, of `total` rows or positions (0 for a regression loss). */
  correct: number;
  total: number;
  lossSum: number;
  metrics?: Record<string, { sum: number; count: number }>;
  confusion?: ConfusionSums;
}

/** The metrics to report when the setup names none: accuracy for every classifier output. */
export function defaultMetrics(losses: OutputLoss[]): EvalMetric[] {
  const several = losses.length > 1;
  return losses.flatMap((l) => [
    ...(several ? [{ output: l.output, name: `${l.output}_loss`, kind: l.loss }] : []),
    ...(l.metric ? [{ output: l.output, name: several ? `${l.output}_accuracy` : 'accuracy', kind: l.metric }] : []),
  ]);
}

/** Sums over one batch of whole outputs (every row's every value) and their targets. Call inside tf.tidy. */
export function evalSums(losses: OutputLoss[], metrics: EvalMetric[], outputs: tf.Tensor[], targets: tf.Tensor[]): EvalSums {
  const rows = outputs[0]?.shape[0] ?? 0;
  const lossTerms = losses.map((loss, i) => lossSum(loss, outputs[i], targets[i], 1).dataSync()[0]);
  // Accuracy of the first output that has one (the event's validationAccuracy).
  const first = losses.findIndex((l) => l.metric !== null);
  const { correct, count } = first < 0 ? { correct: 0, count: 0 } : correctCount(losses[first], outputs[first], targets[first]);
  const sums: EvalSums = { correct, total: count, lossSum: lossTerms.reduce((a, b) => a + b, 0) };
  if (metrics.length) {
    sums.metrics = {};
    for (const m of metrics) {
      const i = losses.findIndex((l) => l.output === m.output);
      if (i < 0) continue;
      const spec = losses[i];
      if (isAccuracy(m.kind)) {
        const c = correctCount({ ...spec, metric: m.kind }, outputs[i], targets[i]);
        sums.metrics[m.name] = { sum: c.correct, count: c.count };
      } else {
        // A loss as a metric: unweighted, summed over rows (each row's mean over its positions).
        sums.metrics[m.name] = { sum: lossSum({ ...spec, loss: m.kind, weight: 1 }, outputs[i], targets[i], 1).dataSync()[0], count: rows };
      }
    }
  }
  const confusion = first < 0 ? undefined : confusionSums(losses[first], outputs[first], targets[first]);
  if (confusion) sums.confusion = confusion;
  return sums;
}

/** Run `f` in a tfjs scope that frees its tensors, returning its plain result (tf.tidy's types want tensors). */
export function tidily<T>(f: () => T): T {
  let result!: T;
  tf.tidy(() => {
    result = f();
  });
  return result;
}

/** Predicted and true class per position of a classifier output, or undefined when it is not one (a multi-label binary output). */
function classPairs(spec: OutputLoss, output: tf.Tensor, target: tf.Tensor): { predicted: Int32Array; truth: Int32Array; classes: number } | undefined {
  const last = output.shape[output.shape.length - 1] ?? 1;
  if (spec.metric === 'binaryAccuracy') {
    if (last !== 1 || target.size !== output.size) return undefined;
    const predicted = tf.cast(tf.greater(output, spec.fromLogits ? 0 : 0.5), 'int32').dataSync() as Int32Array;
    const truth = tf.cast(tf.greater(target, 0.5), 'int32').dataSync() as Int32Array;
    return { predicted, truth, classes: 2 };
  }
  if (last < 2) return undefined;
  const predicted = tf.argMax(output, -1);
  let truth: tf.Tensor;
  if (target.size * last === output.size && (spec.metric === 'sparseCategoricalAccuracy' || target.size !== output.size)) truth = tf.cast(tf.floor(target), 'int32');
  else if (target.size === output.size) truth = tf.argMax(tf.reshape(target, output.shape), -1);
  else return undefined;
  return { predicted: predicted.dataSync() as Int32Array, truth: truth.dataSync() as Int32Array, classes: last };
}

export function confusionSums(spec: OutputLoss, output: tf.Tensor, target: tf.Tensor): ConfusionSums | undefined {
  if (spec.metric === null) return undefined;
  if ((output.shape[output.shape.length - 1] ?? 1) > PER_CLASS_MAX_CLASSES) return undefined;
  const pairs = classPairs(spec, output, target);
  if (!pairs) return undefined;
  const { predicted, truth, classes } = pairs;
  const full = classes <= CONFUSION_MATRIX_MAX_CLASSES;
  const sums: ConfusionSums = { output: spec.output, classes, perClassTotal: new Array<number>(classes).fill(0), perClassCorrect: new Array<number>(classes).fill(0), matrix: full ? new Array<number>(classes * classes).fill(0) : null };
  for (let i = 0; i < truth.length; i++) {
    const t = truth[i];
    const p = predicted[i];
    // A label outside the classes was refused when the data was checked; skip rather than index out of range.
    if (t < 0 || t >= classes) continue;
    sums.perClassTotal[t] += 1;
    if (p === t) sums.perClassCorrect[t] += 1;
    if (sums.matrix) sums.matrix[t * classes + p] += 1;
  }
  return sums;
}

/** Add one share of sums into another (chunks of one agent). */
export function addEvalSums(into: EvalSums, more: EvalSums): void {
  into.correct += more.correct;
  into.total += more.total;
  into.lossSum += more.lossSum;
  addMergeableSums(into, more);
}
