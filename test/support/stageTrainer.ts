// A built-in model trained in this process by Shoal's one stage executor (GraphStage) holding every
// layer, with Shoal's optimizer: the single-agent workload for backend tests and benchmarks. It is
// the code under test there, never an exactness reference (that is tfjsReference.ts).
import * as tf from '@tensorflow/tfjs-core';
import { gatherBatch, type MnistData } from '../../agents/data/mnist.js';
import { buildGraphStage } from '../../agents/exec/graph/buildGraphStage.js';
import type { GraphStage } from '../../agents/exec/graph/graphStage.js';
import { createOptimizer, type Optimizer } from '../../agents/exec/optimizer.js';
import { globalBatchIndices } from '../../engine/data/dataOrder.js';
import { MNIST_PIXELS } from '../../engine/data/mnistSplit.js';
import type { ModelGraph } from '../../engine/model/graph.js';
import type { Plan } from '../../engine/plan/plan.js';
import { defaultTraining } from '../../engine/protocol/trainingSetup.js';

export class StageTrainer {
  step = 0;

  private constructor(readonly stage: GraphStage, private readonly optimizer: Optimizer, private readonly plan: Plan, private readonly data: MnistData) {}

  static async create(model: ModelGraph, plan: Plan, data: MnistData): Promise<StageTrainer> {
    const whole = { ...plan, stages: [{ ...plan.stages[0], layers: model.layers.map((l) => l.id) }] };
    const stage = await buildGraphStage(model, whole, 0, defaultTraining(model).losses);
    return new StageTrainer(stage, createOptimizer(plan.optimizer), plan, data);
  }

  /** One optimizer step on the global batch of the current step; returns the mean loss. */
  async trainStep(): Promise<number> {
    const indices = globalBatchIndices(this.plan.seed, this.step, this.plan.globalBatch, this.data.train.size);
    const batch = gatherBatch(this.data.train, indices);
    const x = tf.tensor2d(batch.images, [indices.length, MNIST_PIXELS]);
    const { loss, dx } = await this.stage.lossBackward(x, Float32Array.from(batch.labels), indices.length, this.plan.globalBatch);
    dx?.dispose();
    x.dispose();
    this.optimizer.apply(this.stage.params, this.stage.takeGradients());
    this.step += 1;
    return loss;
  }

  /** Test accuracy over the held-out digits, evaluated in chunks to bound memory. */
  async evaluate(chunk = 500): Promise<number> {
    const test = this.data.test;
    let correct = 0;
    for (let start = 0; start < test.size; start += chunk) {
      const indices = Array.from({ length: Math.min(chunk, test.size - start) }, (_, i) => start + i);
      const batch = gatherBatch(test, indices);
      const x = tf.tensor2d(batch.images, [indices.length, MNIST_PIXELS]);
      correct += (await this.stage.evaluate(x, Float32Array.from(batch.labels), indices.length)).correct;
      x.dispose();
    }
    return correct / test.size;
  }

  /** Every parameter as one flat array, in order. */
  flatParams(): Float32Array {
    const parts = this.stage.params.map((p) => p.dataSync() as Float32Array);
    const out = new Float32Array(parts.reduce((n, p) => n + p.length, 0));
    let at = 0;
    for (const p of parts) {
      out.set(p, at);
      at += p.length;
    }
    return out;
  }

  dispose(): void {
    this.stage.dispose();
    this.stage.model.dispose();
    this.optimizer.dispose();
  }
}
