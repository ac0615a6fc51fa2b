import * as tf from '@tensorflow/tfjs-core';
import type { LayerNode } from '../../../engine/model/graph.js';
import type { Plan } from '../../../engine/plan/plan.js';
import { crossEntropySum, countCorrect } from '../loss.js';
import { oneHotRows } from '../labels.js';
import { compileStage, type Layout, type StageOp } from './compileStage.js';
import { shardedCorrect, shardedCrossEntropy } from './shardedCrossEntropy.js';
import type { ShardedParamSpec } from './shardedParams.js';
import type { FinalGradient } from '../stageExecutor.js';
import { FinalHandOver } from './finalHandOver.js';
import type { TensorGroup } from './tensorGroup.js';

let nextVariableId = 0;

/**
 * One tensor-parallel shard of a pipeline stage: the same contract as StageModule (forward, backward
 * from the stage input, loss-and-backward on the last stage, accumulated gradients), but asynchronous,
 * because its layers exchange tensors with the other shards between local computations.
 *
 * Tensors at the stage's edges are this shard's rows of the micro-batch (S0); `rows` is the whole
 * micro-batch. A training forward pass keeps every op's input for the backward pass, unless the plan
 * recomputes activations: then the backward pass runs the forward pass again from the stage input,
 * collectives included.
 */
export class ShardedStage {
  readonly params: tf.Variable[];
  readonly paramSpecs: ShardedParamSpec[];
  private readonly ops: StageOp[];
  readonly outputLayout: Layout;
  private gradients: Array<tf.Tensor | null> = [];
  private handing: Promise<void> = Promise.resolve();
  /** Every op's input from training forward passes whose backward pass is still to come, by stage input. */
  private readonly kept = new Map<tf.Tensor, tf.Tensor[]>();

  constructor(
    plan: Plan,
    readonly layers: LayerNode[],
    readonly inputShape: number[],
    readonly isFirst: boolean,
    readonly isLast: boolean,
    readonly group: TensorGroup,
    /** Keep every op's input for the backward pass (else recompute them, collectives included). */
    private readonly keepActivations = !plan.recompute,
  ) {
    const compiled = compileStage(plan, layers, inputShape, group, isLast);
    this.ops = compiled.ops;
    this.paramSpecs = compiled.params;
    this.outputLayout = compiled.output;
    this.params = this.paramSpecs.map((p) => tf.variable(tf.tensor(p.init, p.shape), true, `${p.name}#tp${nextVariableId++}`));
  }

  /** The compiled program, e.g. "gather rows → enter column-parallel → dense_1 → …" (logged at set-up). */
  describe(): string {
    return this.ops.map((op) => op.name).join(' → ');
  }

  get outputShape(): number[] {
    return this.layers[this.layers.length - 1].outputShape;
  }

  /** Run the ops; keep every op's input when `saved` is given (for the backward pass). */
  private async run(x: tf.Tensor, rows: number, saved?: tf.Tensor[]): Promise<tf.Tensor> {
    let y = x;
    for (const op of this.ops) {
      saved?.push(y);
      const next = op.kind === 'local' ? tf.tidy(() => op.run(y, op.params.map((i) => this.params[i]))) : await op.forward(y, rows);
      if (y !== x && !saved) y.dispose();
      y = next;
    }
    return y === x ? x.clone() : y;
  }

  async forward(x: tf.Tensor, rows: number): Promise<tf.Tensor> {
    if (!this.keepActivations) return this.run(x, rows);
    const saved: tf.Tensor[] = [];
    const y = await this.run(x, rows, saved);
    this.kept.set(x, saved);
    return y;
  }

  /** Evaluation: the forward computation, nothing kept. */
  infer(x: tf.Tensor, rows: number): Promise<tf.Tensor> {
    return this.run(x, rows);
  }

  /** Op inputs kept for backward passes still to come (the stage inputs themselves are the schedule's). */
  keptTensors(): tf.Tensor[] {
    return [...this.kept.entries()].flatMap(([x, saved]) => saved.filter((t) => t !== x));
  }

  /**
   * Backward through the ops in reverse from the gradient of the output; returns the gradient of the
   * stage input (this shard's rows), or null on the first stage, which has no input to differentiate.
   */
  private async backwardFrom(saved: tf.Tensor[], x: tf.Tensor, dy: tf.Tensor, rows: number, onFinal?: FinalGradient): Promise<tf.Tensor | null> {
    const handOver = onFinal ? new FinalHandOver(this.group, this.paramSpecs, onFinal) : null;
    if (handOver) this.handing = handOver.done();
    let grad = dy;
    // Where nothing earlier has parameters and no input gradient is wanted, the rest is skipped.
    const lastNeeded = this.isFirst ? this.ops.findIndex((op) => op.kind === 'local' && op.params.length > 0) : 0;
    for (let i = this.ops.length - 1; i >= Math.max(lastNeeded, 0); i--) {
      const op = this.ops[i];
      const input = saved[i];
      let next: tf.Tensor;
      if (op.kind === 'local') {
        next = tf.tidy(() => {
          const gradsOf = tf.grads((inp: tf.Tensor, ...p: tf.Tensor[]) => op.run(inp, p));
          const [dx, ...dParams] = gradsOf([input, ...op.params.map((k) => this.params[k])], grad);
          this.accumulate(op.params, dParams);
          return dx;
        });
        // On the step's last backward pass these gradients are final: out they go while earlier layers
        // compute, and the event loop gets a turn so that the collectives just started make progress.
        if (handOver && op.params.length > 0) {
          handOver.add(op.params.map((k) => this.takeGradient(k)), op.params);
          await new Promise<void>((resolve) => setImmediate(resolve));
        }
      } else {
        next = await op.backward(grad, rows);
      }
      if (grad !== dy) grad.dispose();
      grad = next;
    }
    saved.forEach((t) => t !== x && t.dispose());
    if (this.isFirst) {
      if (grad !== dy) grad.dispose();
      return null;
    }
    return grad === dy ? dy.clone() : grad;
  }

  async backward(x: tf.Tensor, dy: tf.Tensor, rows: number, onFinal?: FinalGradient): Promise<tf.Tensor | null> {
    let saved = this.kept.get(x);
    this.kept.delete(x);
    if (!saved) {
      saved = [];
      (await this.run(x, rows, saved)).dispose();
    }
    return this.backwardFrom(saved, x, dy, rows, onFinal);
  }

  /**
   * Last stage: loss of the micro-batch (summed, divided by the global batch) and the input gradient.
   * `labels` are the class indices of all rows of the micro-batch. Shards that computed the same loss
   * redundantly report it once (shard 0), so that summing every agent's loss counts each sample once.
   */
  async lossBackward(x: tf.Tensor, targets: Float32Array, rows: number, divisor: number, onFinal?: FinalGradient): Promise<{ loss: number; dx: tf.Tensor | null }> {
    const labels = Int32Array.from(targets);
    const saved: tf.Tensor[] = [];
    const logits = await this.run(x, rows, saved);
    const { loss, dLogits } = await this.lossAndGradient(logits, labels, divisor);
    logits.dispose();
    const dx = await this.backwardFrom(saved, x, dLogits, rows, onFinal);
    dLogits.dispose();
    return { loss, dx };
  }

  private async lossAndGradient(logits: tf.Tensor, labels: Int32Array, divisor: number): Promise<{ loss: number; dLogits: tf.Tensor }> {
    if (this.outputLayout === 'S1') {
      const { lossSum, dLogits } = await shardedCrossEntropy(this.group, logits, labels, divisor);
      return { loss: this.group.index === 0 ? lossSum : 0, dLogits };
    }
    const mine = this.rowLabels(labels, logits.shape[0]);
    let loss = 0;
    const dLogits = tf.tidy(() => {
      const target = tf.tensor2d(oneHotRows(mine, logits.shape[1]!), logits.shape as [number, number]);
      const { value, grad } = tf.valueAndGrad((z: tf.Tensor) => crossEntropySum(z, target, divisor))(logits);
      loss = value.dataSync()[0];
      return grad;
    });
    return { loss: this.outputLayout === 'B' && this.group.index !== 0 ? 0 : loss, dLogits };
  }

  /** The labels of the rows this shard's logits cover: its own rows when split by rows, else all. */
  private rowLabels(labels: Int32Array, logitRows: number): Int32Array {
    if (this.outputLayout !== 'S0') return labels;
    const [a, b] = this.group.rowRange(labels.length);
    if (b - a !== logitRows) throw new Error(`Shard ${this.group.index} has ${logitRows} rows of logits but owns rows ${a}–${b} of the labels.`);
    return labels.subarray(a, b);
  }

  /** Evaluation on the last stage: correct predictions and summed loss, counted once per sample. */
  async evaluate(x: tf.Tensor, targets: Float32Array, rows: number): Promise<{ correct: number; total: number; lossSum: number }> {
    const labels = Int32Array.from(targets);
    const logits = await this.forward(x, rows);
    try {
      if (this.outputLayout === 'S1') {
        const correct = await shardedCorrect(this.group, logits, labels);
        const { lossSum, dLogits } = await shardedCrossEntropy(this.group, logits, labels, 1);
        dLogits.dispose();
        return this.group.index === 0 ? { correct, total: rows, lossSum } : { correct: 0, total: 0, lossSum: 0 };
      }
      if (this.outputLayout === 'B' && this.group.index !== 0) return { correct: 0, total: 0, lossSum: 0 };
      const mine = this.rowLabels(labels, logits.shape[0]);
      return tf.tidy(() => {
        const target = tf.tensor2d(oneHotRows(mine, logits.shape[1]!), logits.shape as [number, number]);
        return { correct: countCorrect(logits, target), total: mine.length, lossSum: crossEntropySum(logits, target, 1).dataSync()[0] };
      });
    } finally {
      logits.dispose();
    }
  }

  private accumulate(indices: number[], dParams: tf.Tensor[]): void {
    indices.forEach((k, j) => {
      const previous = this.gradients[k];
      this.gradients[k] = tf.keep(previous ? tf.add(previous, dParams[j]) : dParams[j].clone());
      previous?.dispose();
    });
  }

  /** The last backward pass's hand-overs (FinalHandOver), once: the input gradient does not wait for them. */
  handedOver(): Promise<void> {
    const handing = this.handing;
    this.handing = Promise.resolve();
    return handing;
  }

  /** Take parameter k's accumulated gradient (zeros if none); takeGradients then gives zeros for it. */
  private takeGradient(k: number): tf.Tensor {
    const grad = this.gradients[k] ?? tf.zerosLike(this.params[k]);
    this.gradients[k] = null;
    return grad;
  }

  /** Take the accumulated gradients (zeros where nothing accumulated) and reset the accumulators. */
  takeGradients(): tf.Tensor[] {
    return this.params.map((_, k) => this.takeGradient(k));
  }

  dispose(): void {
    this.params.forEach((p) => p.dispose());
    this.gradients.forEach((g) => g?.dispose());
    this.keptTensors().forEach((t) => t.dispose());
  }
}
