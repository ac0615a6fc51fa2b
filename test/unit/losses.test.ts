import '@tensorflow/tfjs-backend-cpu';
// tfjs-layers on tfjs-core alone needs the chained tensor ops and the gradients registered.
import '@tensorflow/tfjs-core/dist/public/chained_ops/register_all_chained_ops';
import '@tensorflow/tfjs-core/dist/register_all_gradients';
import * as tf from '@tensorflow/tfjs-core';
import * as tfl from '@tensorflow/tfjs-layers';
import { beforeAll, describe, expect, it } from 'vitest';
import { correctCount, lossSum } from '../../agents/exec/losses.js';
import { importKerasModel } from '../../engine/model/import/importKeras.js';
import { lossFromKerasObject, metricFor, normalizeLossName, trainingSpecFor, type LossName, type OutputLoss } from '../../engine/model/trainingSpec.js';

beforeAll(async () => {
  await tf.setBackend('cpu');
});

/** Deterministic pseudo-random numbers in [0, 1). */
function random(n: number, seed: number): Float32Array {
  let s = seed >>> 0 || 1;
  return Float32Array.from({ length: n }, () => {
    s = (Math.imul(s, 1664525) + 1013904223) >>> 0;
    return s / 2 ** 32;
  });
}
const normal = (shape: number[], seed: number, scale = 2) => tf.tensor(random(shape.reduce((a, b) => a * b, 1), seed).map((u) => (u - 0.5) * 2 * scale), shape);
const classes = (n: number, c: number, seed: number) => tf.tensor(random(n, seed).map((u) => Math.floor(u * c)));

/** max |a - b| / max |b|: relative to the reference's scale, so that entries near zero do not dominate. */
function relErr(a: tf.Tensor, b: tf.Tensor): number {
  const x = a.dataSync();
  const y = b.dataSync();
  expect(x.length).toBe(y.length);
  let diff = 0;
  let scale = 0;
  for (let i = 0; i < x.length; i++) {
    diff = Math.max(diff, Math.abs(x[i] - y[i]));
    scale = Math.max(scale, Math.abs(y[i]));
  }
  return diff / Math.max(scale, 1e-30);
}

const spec = (loss: LossName, fromLogits: boolean, weight = 1): OutputLoss => ({ output: 'out', loss, fromLogits, weight, metric: metricFor(loss) });

/** tfjs-layers' own loss function, as `model.fit` uses it after `compile({ loss })`. */
function tfjsLoss(name: string): (yTrue: tf.Tensor, yPred: tf.Tensor) => tf.Tensor {
  const input = tfl.input({ shape: [1] });
  const model = tfl.model({ inputs: input, outputs: tfl.layers.dense({ units: 1 }).apply(input) as tfl.SymbolicTensor });
  model.compile({ loss: name, optimizer: 'sgd' });
  return model.lossFunctions[0];
}

/**
 * Our loss against a reference mean loss: value and gradient w.r.t. the output. `lossSum` divided by the
 * global batch `divisor` must equal the reference mean scaled by rows / divisor.
 */
function expectMatches(s: OutputLoss, output: tf.Tensor, target: tf.Tensor, reference: (out: tf.Tensor) => tf.Scalar): void {
  const rows = output.shape[0];
  const divisor = 3 * rows;
  const ours = tf.grad((out: tf.Tensor) => lossSum(s, out, target, divisor));
  const theirs = tf.grad((out: tf.Tensor) => tf.mul(reference(out), (s.weight * rows) / divisor) as tf.Scalar);
  const value = lossSum(s, output, target, divisor);
  const refValue = tf.mul(reference(output), (s.weight * rows) / divisor);
  expect(relErr(value, refValue)).toBeLessThan(1e-6);
  expect(relErr(ours(output), theirs(output))).toBeLessThan(1e-6);
}

const meanOf = (fn: (yTrue: tf.Tensor, yPred: tf.Tensor) => tf.Tensor, target: tf.Tensor) => (out: tf.Tensor) => tf.mean(fn(target, out)) as tf.Scalar;

describe('lossSum equals tfjs-layers losses (value and gradient)', () => {
  const rows = 6;
  const C = 5;

  it('categoricalCrossentropy on probabilities (softmax head) and from logits', () => {
    const logits = normal([rows, C], 1);
    const target = tf.oneHot(tf.tensor1d([0, 4, 2, 2, 1, 3], 'int32'), C).toFloat();
    expectMatches(spec('categoricalCrossentropy', false), tf.softmax(logits), target, meanOf(tfjsLoss('categoricalCrossentropy'), target));
    // Not-normalised probabilities: tfjs divides by the class sum.
    expectMatches(spec('categoricalCrossentropy', false), tf.sigmoid(logits), target, meanOf(tfjsLoss('categoricalCrossentropy'), target));
    const ref = (out: tf.Tensor) => tf.losses.softmaxCrossEntropy(target, out, undefined, 0, tf.Reduction.MEAN) as tf.Scalar;
    expectMatches(spec('categoricalCrossentropy', true), logits, target, ref);
    expectMatches(spec('categoricalCrossentropy', true, 0.25), logits, target, ref);
    // The tfjs-layers fromLogits form (softmax -> clip -> log) agrees too where no probability is clipped.
    expectMatches(spec('categoricalCrossentropy', true), logits, target, (out) => tf.mean(tfjsLoss('categoricalCrossentropy')(target, tf.softmax(out))) as tf.Scalar);
  });

  it('sparseCategoricalCrossentropy with [rows], [rows, 1] and one-hot targets, and from logits', () => {
    const logits = normal([rows, C], 2);
    const labels = classes(rows, C, 3);
    const sparse = tfjsLoss('sparseCategoricalCrossentropy');
    for (const target of [labels, labels.reshape([rows, 1])]) {
      expectMatches(spec('sparseCategoricalCrossentropy', false), tf.softmax(logits), target, meanOf(sparse, target));
    }
    const oneHot = tf.oneHot(labels.toInt(), C).toFloat();
    expectMatches(spec('sparseCategoricalCrossentropy', false), tf.softmax(logits), oneHot, meanOf(sparse, labels));
    const ref = (out: tf.Tensor) => tf.losses.softmaxCrossEntropy(oneHot, out, undefined, 0, tf.Reduction.MEAN) as tf.Scalar;
    expectMatches(spec('sparseCategoricalCrossentropy', true), logits, labels, ref);
    expectMatches(spec('sparseCategoricalCrossentropy', true), logits, labels.reshape([rows, 1]), ref);
  });

  it('sparseCategoricalCrossentropy on a sequence output averages over time steps like Keras', () => {
    const T = 4;
    const logits = normal([rows, T, C], 4);
    const labels = classes(rows * T, C, 5).reshape([rows, T]);
    expectMatches(spec('sparseCategoricalCrossentropy', false), tf.softmax(logits), labels, meanOf(tfjsLoss('sparseCategoricalCrossentropy'), labels));
    const oneHot = tf.oneHot(labels.toInt(), C).toFloat();
    const ref = (out: tf.Tensor) => tf.losses.softmaxCrossEntropy(oneHot, out, undefined, 0, tf.Reduction.MEAN) as tf.Scalar;
    expectMatches(spec('sparseCategoricalCrossentropy', true), logits, labels, ref);
    const acc = correctCount(spec('sparseCategoricalCrossentropy', true), logits, labels);
    const expected = tf.sum(tf.equal(tf.argMax(logits, -1), labels.toInt()).toInt()).dataSync()[0];
    expect(acc).toEqual({ correct: expected, count: rows * T });
  });

  it('binaryCrossentropy on probabilities (sigmoid head) and from logits, one or several labels', () => {
    for (const [shape, seed] of [[[rows, 1], 6], [[rows, 3], 7]] as const) {
      const logits = normal([...shape], seed);
      const target = tf.tensor(random(logits.size, seed + 10).map((u) => (u < 0.5 ? 0 : 1)), shape[1] === 1 ? [rows] : [...shape]);
      const labels = target.reshape([...shape]);
      expectMatches(spec('binaryCrossentropy', false), tf.sigmoid(logits), target, meanOf(tfjsLoss('binaryCrossentropy'), labels));
      const ref = (out: tf.Tensor) => tf.losses.sigmoidCrossEntropy(labels, out, undefined, 0, tf.Reduction.MEAN) as tf.Scalar;
      expectMatches(spec('binaryCrossentropy', true), logits, target, ref);
    }
  });

  it('meanSquaredError and meanAbsoluteError, flat and per time step', () => {
    for (const [shape, seed] of [[[rows, 1], 8], [[rows, 3], 9], [[rows, 4, 2], 10]] as const) {
      const output = normal([...shape], seed);
      const target = normal([...shape], seed + 1);
      for (const [name, loss] of [['meanSquaredError', 'meanSquaredError'], ['meanAbsoluteError', 'meanAbsoluteError']] as const) {
        const feed = shape[1] === 1 && shape.length === 2 ? target.reshape([rows]) : target;
        expectMatches(spec(loss, false), output, feed, meanOf(tfjsLoss(name), target));
      }
    }
  });

  it('micro-batch gradients with the global divisor add up to the mean-loss gradient of tfjs model.fit', async () => {
    // A Dense softmax head with zero weights: one SGD step with rate 1 moves the kernel by exactly -gradient.
    const x = normal([8, 3], 11);
    const labels = classes(8, 4, 12);
    const model = tfl.sequential({ layers: [tfl.layers.dense({ units: 4, inputShape: [3], activation: 'softmax', kernelInitializer: 'zeros', biasInitializer: 'zeros' })] });
    model.compile({ loss: 'sparseCategoricalCrossentropy', optimizer: tf.train.sgd(1) });
    await model.trainOnBatch(x, labels);
    const tfjsGrad = tf.neg(model.getWeights()[0]);
    const kernel = tf.zeros([3, 4]);
    const s = spec('sparseCategoricalCrossentropy', false);
    const micro = [0, 4].map((start) =>
      tf.grad((k: tf.Tensor) => lossSum(s, tf.softmax(tf.matMul(x.slice(start, 4), k as tf.Tensor2D)), labels.slice(start, 4), 8))(kernel),
    );
    expect(relErr(tf.add(micro[0], micro[1]), tfjsGrad)).toBeLessThan(1e-6);
  });
});

describe('correctCount', () => {
  it('counts like the Keras accuracy metrics', () => {
    const probs = tf.tensor2d([[0.7, 0.2, 0.1], [0.1, 0.3, 0.6], [0.2, 0.5, 0.3]]);
    expect(correctCount(spec('sparseCategoricalCrossentropy', false), probs, tf.tensor1d([0, 1, 1]))).toEqual({ correct: 2, count: 3 });
    const oneHot = tf.tensor2d([[1, 0, 0], [0, 0, 1], [1, 0, 0]]);
    expect(correctCount(spec('categoricalCrossentropy', false), probs, oneHot)).toEqual({ correct: 2, count: 3 });
    expect(correctCount(spec('binaryCrossentropy', false), tf.tensor2d([[0.9], [0.4], [0.6]]), tf.tensor1d([1, 0, 0]))).toEqual({ correct: 2, count: 3 });
    expect(correctCount(spec('binaryCrossentropy', true), tf.tensor2d([[2], [-1], [0.5]]), tf.tensor1d([1, 0, 0]))).toEqual({ correct: 2, count: 3 });
    expect(correctCount(spec('meanSquaredError', false), probs, probs)).toEqual({ correct: 0, count: 0 });
  });

  it('rejects targets that do not fit the output', () => {
    expect(() => lossSum(spec('meanSquaredError', false), tf.zeros([4, 2]), tf.zeros([4, 3]), 4)).toThrow(/do not fit outputs of shape \[4, 2\]/);
  });
});

describe('loss names', () => {
  it('accepts Keras and tfjs spellings', () => {
    const cases: [string, LossName][] = [
      ['categorical_crossentropy', 'categoricalCrossentropy'], ['categoricalCrossentropy', 'categoricalCrossentropy'], ['CategoricalCrossentropy', 'categoricalCrossentropy'],
      ['sparse_categorical_crossentropy', 'sparseCategoricalCrossentropy'], ['SparseCategoricalCrossentropy', 'sparseCategoricalCrossentropy'],
      ['binary_crossentropy', 'binaryCrossentropy'], ['mse', 'meanSquaredError'], ['MSE', 'meanSquaredError'], ['mean_squared_error', 'meanSquaredError'],
      ['meanSquaredError', 'meanSquaredError'], ['mae', 'meanAbsoluteError'], ['mean_absolute_error', 'meanAbsoluteError'], ['keras.losses.mae', 'meanAbsoluteError'],
    ];
    for (const [name, loss] of cases) expect(normalizeLossName(name), name).toBe(loss);
    expect(() => normalizeLossName('hinge')).toThrow(/Unknown loss "hinge".*sparse_categorical_crossentropy/);
  });

  it('reads Keras 3 loss objects', () => {
    expect(lossFromKerasObject({ module: 'keras.losses', class_name: 'SparseCategoricalCrossentropy', config: { name: 'x', reduction: 'sum_over_batch_size', from_logits: true, ignore_class: null } })).toEqual({ loss: 'sparseCategoricalCrossentropy', fromLogits: true, ignored: [] });
    expect(lossFromKerasObject({ class_name: 'BinaryCrossentropy', config: { from_logits: false, label_smoothing: 0.1 } })).toEqual({ loss: 'binaryCrossentropy', fromLogits: false, ignored: ['label_smoothing 0.1'] });
    expect(lossFromKerasObject({ module: 'keras.losses', class_name: 'function', config: 'mean_squared_error', registered_name: 'mean_squared_error' }).loss).toBe('meanSquaredError');
    expect(() => lossFromKerasObject({ class_name: 'Huber', config: {} })).toThrow(/Unknown loss "Huber"/);
  });
});

describe('trainingSpecFor', () => {
  const L = tfl.layers;
  /** Three heads: 5-way softmax "cls", linear "reg", sigmoid "bin"; plus a linear 10-way "logits". */
  function heads(): tfl.LayersModel {
    const input = tfl.input({ shape: [4] });
    const hidden = L.dense({ units: 8, activation: 'relu', name: 'hidden' }).apply(input) as tfl.SymbolicTensor;
    const outputs = [
      L.dense({ units: 5, activation: 'softmax', name: 'cls' }),
      L.dense({ units: 1, name: 'reg' }),
      L.dense({ units: 1, activation: 'sigmoid', name: 'bin' }),
      L.dense({ units: 10, name: 'logits' }),
    ].map((l) => l.apply(hidden) as tfl.SymbolicTensor);
    return tfl.model({ inputs: input, outputs, name: 'heads' });
  }
  const topology = () => heads().toJSON(null, false) as object;
  const graphOf = (doc: unknown) => importKerasModel(doc).graph;
  const brief = (spec: { outputs: OutputLoss[] }) => spec.outputs.map((o) => [o.output, o.loss, o.fromLogits, o.weight, o.metric]);

  it('reads a tfjs model.json trainingConfig with a string loss (softmax head: on probabilities)', async () => {
    const input = tfl.input({ shape: [4] });
    const model = tfl.model({ inputs: input, outputs: L.dense({ units: 3, activation: 'softmax', name: 'probs' }).apply(input) as tfl.SymbolicTensor });
    model.compile({ loss: 'categoricalCrossentropy', optimizer: 'adam', metrics: ['accuracy'] });
    let artifacts: tf.io.ModelArtifacts | undefined;
    await model.save({ save: async (a) => ((artifacts = a), { modelArtifactsInfo: { dateSaved: new Date(), modelTopologyType: 'JSON' } }) }, { includeOptimizer: true });
    const doc = JSON.stringify({ modelTopology: artifacts!.modelTopology, trainingConfig: artifacts!.trainingConfig, weightsManifest: [] });
    const spec = trainingSpecFor(graphOf(doc), doc, {});
    expect(brief(spec)).toEqual([['probs', 'categoricalCrossentropy', false, 1, 'categoricalAccuracy']]);
    expect(spec.notes[0]).toMatch(/probs: categoricalCrossentropy from the model file's training config, on probabilities \(the head's activation is softmax\)/);
  });

  it('reads a list of losses and loss weights from modelTopology.training_config (Keras 2 names)', () => {
    const doc = { modelTopology: { model_config: topology(), training_config: { loss: ['sparse_categorical_crossentropy', 'mse', 'binary_crossentropy', 'categorical_crossentropy'], loss_weights: [1, 0.5, 2, 1], metrics: ['acc'] } } };
    expect(brief(trainingSpecFor(graphOf(doc), doc, {}))).toEqual([
      ['cls', 'sparseCategoricalCrossentropy', false, 1, 'sparseCategoricalAccuracy'],
      ['reg', 'meanSquaredError', false, 0.5, null],
      ['bin', 'binaryCrossentropy', false, 2, 'binaryAccuracy'],
      ['logits', 'categoricalCrossentropy', true, 1, 'categoricalAccuracy'],
    ]);
    const wrong = { modelTopology: { model_config: topology(), training_config: { loss: ['mse', 'mse'] } } };
    expect(() => trainingSpecFor(graphOf(wrong), wrong, {})).toThrow(/"loss" lists 2 entries for 4 model outputs/);
  });

  it('reads a dict of losses and loss weights by output name; an output without a loss is not trained', () => {
    const doc = { modelTopology: topology(), training_config: { loss: { cls: 'categoricalCrossentropy', bin: 'binaryCrossentropy', logits: 'SparseCategoricalCrossentropy', extra: 'mse' }, loss_weights: { cls: 0.3, bin: 0.7 } } };
    const spec = trainingSpecFor(graphOf(doc), doc, {});
    expect(brief(spec)).toEqual([
      ['cls', 'categoricalCrossentropy', false, 0.3, 'categoricalAccuracy'],
      ['bin', 'binaryCrossentropy', false, 0.7, 'binaryAccuracy'],
      ['logits', 'sparseCategoricalCrossentropy', true, 1, 'sparseCategoricalAccuracy'],
    ]);
    expect(spec.notes.join('\n')).toMatch(/extra, which are not outputs/);
    expect(spec.notes.join('\n')).toMatch(/reg: the training config gives this output no loss, so it is not trained/);
  });

  it('reads Keras 3 compile_config loss objects with from_logits', () => {
    const sparse = (fromLogits: boolean) => ({ module: 'keras.losses', class_name: 'SparseCategoricalCrossentropy', config: { name: 'sparse_categorical_crossentropy', reduction: 'sum_over_batch_size', from_logits: fromLogits }, registered_name: null });
    const doc = {
      ...topology(),
      compile_config: { optimizer: 'adam', loss: { cls: sparse(false), reg: { module: 'keras.losses', class_name: 'function', config: 'mean_absolute_error', registered_name: 'mean_absolute_error' }, bin: { class_name: 'BinaryCrossentropy', config: { from_logits: false } }, logits: sparse(false) } },
    };
    const spec = trainingSpecFor(graphOf(doc), doc, {});
    expect(brief(spec)).toEqual([
      ['cls', 'sparseCategoricalCrossentropy', false, 1, 'sparseCategoricalAccuracy'],
      ['reg', 'meanAbsoluteError', false, 1, null],
      ['bin', 'binaryCrossentropy', false, 1, 'binaryAccuracy'],
      ['logits', 'sparseCategoricalCrossentropy', false, 1, 'sparseCategoricalAccuracy'],
    ]);
    // from_logits false on a linear head: Keras's choice is kept, with a warning.
    expect(spec.notes.join('\n')).toMatch(/logits: the loss treats the outputs as probabilities, but the head's activation is linear/);
  });

  it('the --loss option overrides the file; --from-logits overrides the head', () => {
    const doc = { modelTopology: topology(), training_config: { loss: 'mse', loss_weights: [1, 1, 1, 3] } };
    const spec = trainingSpecFor(graphOf(doc), doc, { loss: 'sparse_categorical_crossentropy' });
    expect(brief(spec).map((o) => o.slice(0, 4))).toEqual([
      ['cls', 'sparseCategoricalCrossentropy', false, 1],
      ['reg', 'sparseCategoricalCrossentropy', true, 1],
      ['bin', 'sparseCategoricalCrossentropy', true, 1],
      ['logits', 'sparseCategoricalCrossentropy', true, 3],
    ]);
    expect(spec.notes[0]).toMatch(/from the --loss option/);
    const forced = trainingSpecFor(graphOf(doc), doc, { loss: 'CategoricalCrossentropy', fromLogits: true });
    expect(forced.outputs.every((o) => o.fromLogits)).toBe(true);
    expect(() => trainingSpecFor(graphOf(doc), doc, { loss: 'huber' })).toThrow(/Unknown loss "huber"/);
  });

  it('infers a default loss from the output shape and head, and says why', () => {
    const doc = { modelTopology: topology() };
    const spec = trainingSpecFor(graphOf(doc), doc, {});
    expect(brief(spec)).toEqual([
      ['cls', 'sparseCategoricalCrossentropy', false, 1, 'sparseCategoricalAccuracy'],
      ['reg', 'meanSquaredError', false, 1, null],
      ['bin', 'binaryCrossentropy', false, 1, 'binaryAccuracy'],
      ['logits', 'sparseCategoricalCrossentropy', true, 1, 'sparseCategoricalAccuracy'],
    ]);
    expect(spec.notes).toEqual([
      "cls: sparseCategoricalCrossentropy from a default: the model file and --loss give no loss, and the output has 5 values per position, read as class scores with class-index targets, on probabilities (the head's activation is softmax).",
      'reg: meanSquaredError from a default: the model file and --loss give no loss, and the output is one value with a linear head, read as a regression target.',
      "bin: binaryCrossentropy from a default: the model file and --loss give no loss, and the output is one value with a sigmoid head, read as a binary class probability, on probabilities (the head's activation is sigmoid).",
      "logits: sparseCategoricalCrossentropy from a default: the model file and --loss give no loss, and the output has 10 values per position, read as class scores with class-index targets, from logits (the head's activation is linear).",
    ]);
    // Without a model document at all (a zoo model), and with a separate Activation layer as the head.
    const input = tfl.input({ shape: [6] });
    const dense = L.dense({ units: 4, name: 'd' }).apply(input) as tfl.SymbolicTensor;
    const model = tfl.model({ inputs: input, outputs: L.activation({ activation: 'softmax', name: 'act' }).apply(dense) as tfl.SymbolicTensor });
    const graph = graphOf(model.toJSON(null, false));
    expect(brief(trainingSpecFor(graph, undefined, {}))).toEqual([['act', 'sparseCategoricalCrossentropy', false, 1, 'sparseCategoricalAccuracy']]);
  });
});
