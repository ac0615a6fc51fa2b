import * as tf from '@tensorflow/tfjs-core';
import { globalBatchIndices } from '../../engine/data/dataOrder.js';
import type { ModelGraph } from '../../engine/model/graph.js';
import type { Plan } from '../../engine/plan/plan.js';
import { gatherBatch, type MnistData } from '../data/mnist.js';
import { countCorrect } from './loss.js';
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
    const y = tf.tensor2d(batch.oneHot, [indices.length, 10]);
    const { loss, dx } = this.module.lossBackward(x, y, this.plan.globalBatch);
    dx.dispose();
    x.dispose();
    y.dispose();
    this.optimizer.apply(this.module.params, this.module.takeGradients());
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
      tf.tidy(() => {
        const logits = this.module.forward(tf.tensor2d(batch.images, [indices.length, 784]));
        correct += countCorrect(logits, tf.tensor2d(batch.oneHot, [indices.length, 10]));
      });
    }
    return correct / test.size;
  }

  dispose(): void {
    this.module.dispose();
    this.optimizer.dispose();
  }
}
