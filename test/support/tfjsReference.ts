// The one-process yardstick of the built-in models' exactness tests, computed by tfjs itself: the
// model as tfjs-layers builds it from the built-in's Keras topology (the seeded initial weights every
// agent starts from), trained by tfjs's own optimizers with `optimizer.minimize` over tfjs's own
// softmax cross-entropy, on the global batch of each step. Nothing of Shoal's executor, losses or
// optimizers runs here, so a test that compares a Shoal run with it checks them all.
import * as tf from '@tensorflow/tfjs-core';
import { gatherBatch, loadMnist } from '../../agents/data/mnist.js';
import { MNIST_PIXELS } from '../../engine/data/mnistSplit.js';
import { layersModelOf } from '../../agents/exec/graph/modelOfGraph.js';
import { globalBatchIndices } from '../../engine/data/dataOrder.js';
import type { ModelGraph } from '../../engine/model/graph.js';
import type { OptimizerConfig, Plan } from '../../engine/plan/plan.js';

export interface ReferenceRun {
  /** Every trainable weight after the steps, by manifest name (`dense_1/kernel`, …). */
  params: Map<string, Float32Array>;
  /** The same weights before the first step. */
  initial: Map<string, Float32Array>;
  /** The mean loss of each step. */
  losses: number[];
}

function tfjsOptimizer(config: OptimizerConfig): tf.Optimizer {
  if (config.kind === 'sgd') return config.momentum > 0 ? tf.train.momentum(config.learningRate, config.momentum, config.nesterov ?? false) : tf.train.sgd(config.learningRate);
  if (config.kind === 'adam') return tf.train.adam(config.learningRate, config.beta1, config.beta2, config.epsilon);
  throw new Error(`The tfjs reference has no ${config.kind} optimizer; add it here.`);
}

/** Scale gradients so that their global norm is at most `norm` (Keras's clipnorm over all weights). */
function clipByGlobalNorm(grads: tf.NamedTensorMap, norm: number): tf.NamedTensorMap {
  const total = Math.sqrt(Object.values(grads).reduce((n, g) => n + tf.sum(tf.square(g)).dataSync()[0], 0));
  if (total <= norm) return grads;
  return Object.fromEntries(Object.entries(grads).map(([k, g]) => [k, tf.mul(g, norm / total)]));
}

const snapshot = (weights: Array<{ originalName: string; read(): tf.Tensor }>) => new Map(weights.map((w) => [w.originalName, (w.read().dataSync() as Float32Array).slice()]));

/** Train a built-in MNIST model for `steps` steps of the plan's global batch, seed, data order, optimizer and clipping. */
export async function tfjsReference(graph: ModelGraph, plan: Pick<Plan, 'seed' | 'globalBatch' | 'optimizer' | 'gradientClipNorm' | 'shuffle'>, steps: number): Promise<ReferenceRun> {
  const model = await layersModelOf(graph, plan.seed);
  const data = loadMnist().train;
  const optimizer = tfjsOptimizer(plan.optimizer);
  const weights = model.trainableWeights;
  const initial = snapshot(weights);
  const losses: number[] = [];
  const classes = graph.numClasses!;
  for (let step = 0; step < steps; step++) {
    const indices = globalBatchIndices(plan.seed, step, plan.globalBatch, data.size, plan.shuffle !== false);
    const batch = gatherBatch(data, indices);
    tf.tidy(() => {
      const x = tf.tensor2d(batch.images, [indices.length, MNIST_PIXELS]);
      const labels = tf.oneHot(tf.tensor1d(batch.labels, 'int32'), classes);
      const loss = () => tf.losses.softmaxCrossEntropy(labels, model.apply(x, { training: true }) as tf.Tensor) as tf.Scalar;
      const { value, grads } = tf.variableGrads(loss, weights.map((w) => w.read() as tf.Variable));
      losses.push(value.dataSync()[0]);
      optimizer.applyGradients(plan.gradientClipNorm === undefined ? grads : clipByGlobalNorm(grads, plan.gradientClipNorm));
    });
  }
  const params = snapshot(weights);
  optimizer.dispose();
  model.dispose();
  return { params, initial, losses };
}
