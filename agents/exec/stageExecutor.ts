import * as tf from '@tensorflow/tfjs-core';
import type { EvalMetric } from '../../engine/model/evalMetrics.js';
import type { OutputLoss } from '../../engine/model/trainingSpec.js';
import { evalSums, tidily, type EvalSums } from './evalSums.js';
import type { LayerDone, StageModule } from './stageModule.js';
import type { PassRows } from './graph/dropoutMask.js';
import type { ShardedParamSpec } from './tensorParallel/shardedParams.js';

/** Receives parameter k's final gradient of the step (ownership passes with it). */
export type FinalGradient = (k: number, grad: tf.Tensor) => void;

/**
 * What the synchronous schedules drive, whatever executes the stage: a whole stage in one process
 * (StageModule) or one tensor-parallel shard of it (ShardedStage). Edge tensors are this agent's rows
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
  backward(x: tf.Tensor, dy: tf.Tensor, rows: number, onFinal?: FinalGradient): Promise<tf.Tensor | null>;
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

/** Let other work run — collectives' sends and receives — between two layers of a backward pass. */
const yieldToEventLoop = () => new Promise<void>((resolve) => setImmediate(resolve));

/**
 * Step through a backward pass; after each layer hand over that layer's final gradients and let the
 * event loop run, so that collectives already started make progress while the next layer computes.
 */
async function overlapped<T>(module: StageModule, steps: Generator<LayerDone, T>, onFinal: FinalGradient): Promise<T> {
  for (;;) {
    const next = steps.next();
    if (next.done) return next.value;
    for (const k of next.value) onFinal(k, module.takeGradient(k));
    await yieldToEventLoop();
  }
}

/**
 * A StageModule as an executor. Its methods are looked up at call time, so a module made synthetic
 * (exec/syntheticStage.ts) after wrapping still sleeps instead of computing.
 */
export function wholeStageExecutor(module: StageModule): StageExecutor {
  return {
    params: module.params,
    paramSpecs: module.paramSpecs.map((spec) => ({ ...spec, sum: 'replicated' })),
    inputShape: module.inputShape,
    get outputShape() {
      return module.outputShape;
    },
    forward: async (x) => module.trainForward(x),
    backward: (x, dy, _rows, onFinal) => (onFinal ? overlapped(module, module.backwardSteps(x, dy), onFinal) : Promise.resolve(module.backward(x, dy))),
    lossBackward: (x, targets, _rows, divisor, onFinal) => {
      const labels = Int32Array.from(targets);
      return onFinal ? overlapped(module, module.lossBackwardSteps(x, labels, divisor), onFinal) : Promise.resolve(module.lossBackward(x, labels, divisor));
    },
    infer: async (x) => module.forward(x),
    evaluate: async (x, targets, rows, measure) => {
      if (!measure) return { ...module.evaluate(x, Int32Array.from(targets)), total: rows };
      // The built-in models' one output: logits and class indices.
      return tidily(() => evalSums(measure.losses, measure.metrics, [module.forward(x)], [tf.tensor1d(targets)]));
    },
    takeGradients: () => module.takeGradients(),
    keptTensors: () => module.keptTensors(),
    dispose: () => module.dispose(),
  };
}
