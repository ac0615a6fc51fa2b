import * as tf from '@tensorflow/tfjs-core';
import type { StageExecutor } from './stageExecutor.js';
import { sleepThread, spinThread } from './threadWait.js';
import type { SyntheticStageMs } from '../../engine/protocol/syntheticStage.js';

/**
 * A synthetic version of a stage: its forward and backward passes do no arithmetic, they take exactly
 * the given time per micro-batch and return zeros of the right shapes. Everything around them —
 * receives, sends, schedule order, gradient hand-over, optimizer updates — runs for real, so a job of
 * synthetic stages measures a schedule's utilization with stages of known, equal cost. No parameter
 * gradient is accumulated: updates apply zeros (takeGradients' default).
 */
export function syntheticStage(stage: StageExecutor, ms: SyntheticStageMs): StageExecutor {
  const pass = ms.busy ? spinThread : sleepThread;
  const forward = async (x: tf.Tensor) => {
    pass(ms.forward);
    return tf.zeros([x.shape[0], ...stage.outputShape]);
  };
  return {
    params: stage.params,
    paramSpecs: stage.paramSpecs,
    inputShape: stage.inputShape,
    outputShape: stage.outputShape,
    forward,
    infer: forward,
    backward: async (x) => {
      pass(ms.backward);
      return tf.zeros(x.shape);
    },
    // The last stage turns a micro-batch around in one call, its forward and its backward.
    lossBackward: async (x) => {
      pass(ms.forward + ms.backward);
      return { loss: 0, dx: tf.zeros(x.shape) };
    },
    evaluate: (x, targets, rows, measure) => stage.evaluate(x, targets, rows, measure),
    takeGradients: () => stage.params.map((p) => tf.zerosLike(p)),
    keptTensors: () => [],
    dispose: () => stage.dispose(),
  };
}
