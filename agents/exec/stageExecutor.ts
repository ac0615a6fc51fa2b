import * as tf from '@tensorflow/tfjs-core';
import type { EvalMetric } from '../../engine/model/evalMetrics.js';
import type { OutputLoss } from '../../engine/model/trainingSpec.js';
import type { EvalSums } from './evalSums.js';
import type { PassRows } from './graph/dropoutMask.js';
import type { ShardedParamSpec } from './tensorParallel/shardedParams.js';

/** Receives parameter k's final gradient of the step (ownership passes with it). */
export type FinalGradient = (k: number, grad: tf.Tensor) => void;

/**
 * What the synchronous schedules drive, whatever executes the stage: a whole stage in one process
 * (GraphStage) or one tensor-parallel shard of it. Edge tensors are this agent's rows
 * of the micro-batch and `rows` is the whole micro-batch; `targets` are the packed target rows of all
 * its rows (one float per row for class indices: the built-in models).
 * Input gradients are null where the stage's input needs none (the first stage).
 *
 * `onFinal`, given on a step's last backward pass, lets the executor hand over each parameter's
 * final gradient as soon as it has it (so its all-reduce can start while earlier layers compute);
 * whatever it does not hand over stays accumulated for takeGradients.
 */
export interface StageExecutor {
  readonly params: tf.Variable[];
  readonly paramSpecs: ShardedParamSpec[];
  readonly inputShape: number[];
  readonly outputShape: number[];
  /** Training forward pass; whatever the backward pass needs is kept until it runs. */
  forward(x: tf.Tensor, rows: number): Promise<tf.Tensor>;
  /**
   * `weights`: differentiate at these weights instead of the current ones (PipeMare's discrepancy
   * correction, whole stages only).
   */
  backward(x: tf.Tensor, dy: tf.Tensor, rows: number, onFinal?: FinalGradient, weights?: tf.Tensor[]): Promise<tf.Tensor | null>;
  lossBackward(x: tf.Tensor, targets: Float32Array, rows: number, divisor: number, onFinal?: FinalGradient): Promise<{ loss: number; dx: tf.Tensor | null }>;
  /** Forward pass for evaluation: nothing kept. */
  infer(x: tf.Tensor, rows: number): Promise<tf.Tensor>;
  /**
   * Rows (or positions) the accuracy counts correct, of `total` counted; the summed loss; given what to
   * measure, also the metrics' sums and the class counts (executors that see whole outputs).
   */
  evaluate(x: tf.Tensor, targets: Float32Array, rows: number, measure?: EvalMeasures): Promise<EvalSums>;
  /** The global sample indices of the next pass's rows and the step (deterministic dropout); absent: not needed. */
  setPass?(pass: PassRows | null): void;
  takeGradients(): tf.Tensor[];
  /**
   * Resolves once every gradient given to the last backward pass's onFinal has been handed over (a
   * tensor-parallel shard sums some over its group first); rejects if that failed. Absent: at once.
   */
  handedOver?(): Promise<void>;
  /**
   * Add `share` of the stage's weight-regularization penalty (Keras's kernel_regularizer, …) to the
   * gradients; returns share × the penalty, for the reported loss. Absent: the stage has none.
   */
  regularize?(share: number): number;
  /** After every update: project constrained weights (Keras's weight constraints). Absent: none. */
  applyConstraints?(): void;
  /** Activations kept for backward passes still to come (for memory accounting). */
  keptTensors(): tf.Tensor[];
  dispose(): void;
}

/** What an evaluation measures beyond the loss: each output's loss spec and the metrics to sum. */
export interface EvalMeasures {
  losses: OutputLoss[];
  metrics: EvalMetric[];
}
