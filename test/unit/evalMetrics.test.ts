import '@tensorflow/tfjs-backend-cpu';
import * as tf from '@tensorflow/tfjs-core';
import { beforeAll, describe, expect, it } from 'vitest';
import { addEvalSums, confusionSums, evalSums, tidily, type EvalSums } from '../../agents/exec/evalSums.js';
import { evalMetricsFor } from '../../engine/model/evalMetrics.js';
import type { OutputLoss } from '../../engine/model/trainingSpec.js';
import { confusionOf } from '../../engine/protocol/evaluation.js';

/**
 * The validation metrics: which of a Keras training config's metrics Shoal reports and under which
 * names, and the sums the agents return for them — checked against the metric written out by hand,
 * and additive (two halves summed give the whole), the confusion matrix included.
 */
beforeAll(async () => {
  await tf.setBackend('cpu');
});

const sparse: OutputLoss = { output: 'kind', loss: 'sparseCategoricalCrossentropy', fromLogits: false, weight: 1, metric: 'sparseCategoricalAccuracy' };
const regression: OutputLoss = { output: 'size', loss: 'meanSquaredError', fromLogits: false, weight: 0.5, metric: null };
const binary: OutputLoss = { output: 'spam', loss: 'binaryCrossentropy', fromLogits: true, weight: 1, metric: 'binaryAccuracy' };

describe('evalMetricsFor', () => {
  it('defaults to accuracy for classifiers, nothing for regression', () => {
    expect(evalMetricsFor([sparse], undefined).metrics).toEqual([{ output: 'kind', name: 'accuracy', kind: 'sparseCategoricalAccuracy' }]);
    expect(evalMetricsFor([regression], undefined).metrics).toEqual([]);
  });

  it("reads Keras's spellings: names, objects, a dict by output, and per-output losses for several outputs", () => {
    const config = { metrics: { kind: ['acc', { class_name: 'SparseCategoricalCrossentropy', config: { name: 'xent' } }], size: ['mae', 'mean_squared_error'] } };
    const { metrics, notes } = evalMetricsFor([sparse, regression], config);
    expect(metrics).toEqual([
      { output: 'kind', name: 'kind_loss', kind: 'sparseCategoricalCrossentropy' },
      { output: 'kind', name: 'kind_acc', kind: 'sparseCategoricalAccuracy' },
      { output: 'kind', name: 'kind_xent', kind: 'sparseCategoricalCrossentropy' },
      { output: 'size', name: 'size_loss', kind: 'meanSquaredError' },
      { output: 'size', name: 'size_mae', kind: 'meanAbsoluteError' },
      { output: 'size', name: 'size_mean_squared_error', kind: 'meanSquaredError' },
    ]);
    expect(notes).toEqual([]);
  });

  it('says which metrics it does not report and why', () => {
    const { metrics, notes } = evalMetricsFor([sparse], { metrics: ['accuracy', 'AUC', 'mse'] });
    expect(metrics.map((m) => m.name)).toEqual(['accuracy']);
    expect(notes).toEqual([expect.stringMatching(/"AUC" is not one Shoal computes/), expect.stringMatching(/"mse" does not fit its sparseCategoricalCrossentropy targets/)]);
  });
});

describe('evalSums', () => {
  // 6 rows, 3 classes: predictions argmax [0, 1, 2, 2, 0, 1], truth [0, 1, 1, 2, 2, 1].
  const probs = [
    [0.8, 0.1, 0.1],
    [0.2, 0.7, 0.1],
    [0.1, 0.2, 0.7],
    [0.1, 0.3, 0.6],
    [0.5, 0.2, 0.3],
    [0.3, 0.4, 0.3],
  ];
  const truth = [0, 1, 1, 2, 2, 1];
  const metrics = [
    { output: 'kind', name: 'accuracy', kind: 'sparseCategoricalAccuracy' as const },
    { output: 'kind', name: 'xent', kind: 'sparseCategoricalCrossentropy' as const },
  ];
  const sumsOf = (rows: number[]) =>
    tidily(() => {
      const out = evalSums([sparse], metrics, [tf.tensor2d(rows.map((r) => probs[r]))], [tf.tensor1d(rows.map((r) => truth[r]))]);
      return out;
    });

  it('gives the accuracy, the cross-entropy and the confusion of a batch', () => {
    const s = sumsOf([0, 1, 2, 3, 4, 5]);
    expect(s.correct).toBe(4);
    expect(s.total).toBe(6);
    const xent = -truth.reduce((a, t, i) => a + Math.log(probs[i][t]), 0);
    expect(s.lossSum).toBeCloseTo(xent, 4);
    expect(s.metrics).toEqual({ accuracy: { sum: 4, count: 6 }, xent: { sum: expect.closeTo(xent, 4), count: 6 } });
    expect(s.confusion).toEqual({ output: 'kind', classes: 3, perClassTotal: [1, 3, 2], perClassCorrect: [1, 2, 1], matrix: [1, 0, 0, 0, 2, 1, 1, 0, 1] });
  });

  it('adds up: two halves give the sums of the whole', () => {
    const whole = sumsOf([0, 1, 2, 3, 4, 5]);
    const halves: EvalSums = { correct: 0, total: 0, lossSum: 0 };
    addEvalSums(halves, sumsOf([0, 1, 2]));
    addEvalSums(halves, sumsOf([3, 4, 5]));
    expect(halves.confusion).toEqual(whole.confusion);
    expect(halves.metrics!.accuracy).toEqual(whole.metrics!.accuracy);
    expect(halves.lossSum).toBeCloseTo(whole.lossSum, 4);
  });

  it('names the classes, gives per-class accuracy, and drops the full matrix beyond 100 classes', () => {
    const c = confusionOf(sumsOf([0, 1, 2, 3, 4, 5]).confusion!, ['cat', 'dog', 'eel']);
    expect(c).toEqual({ output: 'kind', classNames: ['cat', 'dog', 'eel'], matrix: [[1, 0, 0], [0, 2, 1], [1, 0, 1]], perClassAccuracy: [1, 2 / 3, 0.5], total: 6 });
    const wide = tidily(() => confusionSums(sparse, tf.oneHot(tf.tensor1d([3, 150], 'int32'), 200), tf.tensor1d([3, 7])))!;
    expect(wide.matrix).toBeNull();
    const named = confusionOf(wide, undefined);
    expect(named.classNames[199]).toBe('199');
    expect(named.perClassAccuracy[3]).toBe(1);
    expect(named.perClassAccuracy[7]).toBe(0);
    expect(named.perClassAccuracy[0]).toBeNull();
    expect(named.note).toMatch(/200 classes: the matrix is kept for at most 100/);
    const vocabulary = tidily(() => confusionSums(sparse, tf.zeros([2, 10_001]), tf.tensor1d([1, 2])));
    expect(vocabulary).toBeUndefined();
  });

  it('counts a one-value binary output as two classes, thresholding logits at 0', () => {
    const c = tidily(() => confusionSums(binary, tf.tensor2d([[2], [-1], [0.5], [-3]]), tf.tensor2d([[1], [1], [0], [0]])))!;
    expect(c).toEqual({ output: 'spam', classes: 2, perClassTotal: [2, 2], perClassCorrect: [1, 1], matrix: [1, 1, 1, 1] });
  });
});
