import * as tf from '@tensorflow/tfjs-core';
import type { StageModule } from './stageModule.js';
import { sleepThread, spinThread } from './threadWait.js';
import type { SyntheticStageMs } from '../../engine/protocol/syntheticStage.js';

/**
 * Turn a stage module into a synthetic one: its forward and backward passes do no arithmetic, they take
 * exactly the given time per micro-batch and return zeros of the right shapes. Everything around them
 * — receives, sends, schedule order, gradient hand-over, optimizer updates — runs for real, so a job of
 * synthetic stages measures a schedule's utilization with stages of known, equal cost. No parameter
 * gradient is accumulated: updates apply zeros (takeGradients' default).
 */
export function makeSynthetic(module: StageModule, ms: SyntheticStageMs): void {
  const pass = ms.busy ? spinThread : sleepThread;
  module.forward = (x) => {
    pass(ms.forward);
    return tf.zeros([x.shape[0], ...module.outputShape]);
  };
  module.trainForward = module.forward;
  // backward() and lossBackward() run these to the end; the schedules may also step through them.
  module.backwardSteps = function* (x) {
    pass(ms.backward);
    return tf.zeros(x.shape);
  };
  // The last stage turns a micro-batch around in one call, its forward and its backward: stepped
  // through (a replica overlapping its all-reduce) or in one go (lossBackward's one tape).
  const turnAround = (x: tf.Tensor) => {
    pass(ms.forward + ms.backward);
    return { loss: 0, dx: tf.zeros(x.shape) };
  };
  module.lossBackwardSteps = function* (x) {
    return turnAround(x);
  };
  module.lossBackward = turnAround;
}
