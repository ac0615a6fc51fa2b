import * as tf from '@tensorflow/tfjs-core';
import { globalBatchIndices } from '../../engine/data/dataOrder.js';
import type { ModelGraph } from '../../engine/model/graph.js';
import type { Plan } from '../../engine/plan/plan.js';
import { gatherBatch, type MnistData } from '../data/mnist.js';
import { clipByGlobalNorm } from './clipping.js';
import { createOptimizer } from './optimizer.js';
import { StageModule } from './stageModule.js';

/**
 * Plain one-process training: the whole model as one stage, the whole global batch at once. It is the
 * yardstick every distributed strategy must match (DESIGN.md's invariant) and the single-agent
 * workload of the backend benchmark.
 */
export class ReferenceTrainer {
  readonly module: StageModule;
  private readonly optimizer;
  step = 0;

  constructor(readonly model: ModelGraph, readonly plan: Plan, readonly data: MnistData) {
    this.module = StageModule.create(model, model.layers.map((l) => l.id), plan.seed);
    this.optimizer = createOptimizer(plan.optimizer);
  }

  /** One optimizer step on the global batch of the current step; returns the mean loss. */
  trainStep(): number {
    const indices = globalBatchIndices(this.plan.seed, this.step, this.plan.globalBatch, this.data.train.size);
    const batch = gatherBatch(this.data.train, indices);
    const x = tf.tensor2d(batch.images, [indices.length, 784]);
    const { loss, dx } = this.module.lossBackward(x, batch.labels, this.plan.globalBatch);
    dx?.dispose();
    x.dispose();
    const grads = this.module.takeGradients();
    const clipNorm = this.plan.gradientClipNorm;
    this.optimizer.apply(this.module.params, clipNorm === undefined ? grads : clipByGlobalNorm(grads, clipNorm));
    this.step += 1;
    return loss;
  }

  /** Test accuracy over the held-out digits, evaluated in chunks to bound memory. */
  evaluate(chunk = 500): number {
    const test = this.data.test;
    let correct = 0;
    for (let start = 0; start < test.size; start += chunk) {
      const indices = Array.from({ length: Math.min(chunk, test.size - start) }, (_, i) => start + i);
      const batch = gatherBatch(test, indices);
      const x = tf.tensor2d(batch.images, [indices.length, 784]);
      correct += this.module.evaluate(x, batch.labels).correct;
      x.dispose();
    }
    return correct / test.size;
  }

  dispose(): void {
    this.module.dispose();
    this.optimizer.dispose();
  }
}
