import * as tf from '@tensorflow/tfjs-core';
import type { StageModule } from './stageModule.js';
import { sleepThread, spinThread } from './threadWait.js';

/** How long a synthetic stage's passes take per micro-batch, in milliseconds, and how they wait. */
export interface SyntheticStageMs {
  forward: number;
  backward: number;
  /**
   * Hold the core for the whole pass, as real arithmetic does, instead of sleeping. Only where every
   * stage has a core of its own. A sleeping thread leaves its CPU idle, and on this kind of virtual
   * machine the first moments after an idle CPU wakes run several times slower (measured: 0.3–0.9 ms
   * for work that takes 0.02 ms on a busy CPU). That slowness lands on the transfers after each pass:
   * p = 2, m = 16 1F1B measured a bubble of 0.080–0.106 asleep and 0.064–0.068 busy (theory 0.059).
   * Real stages keep their cores busy and do not pay it.
   */
  busy?: boolean;
}

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
  // The last stage turns a micro-batch around in one call: its forward and its backward.
  module.lossBackwardSteps = function* (x) {
    pass(ms.forward + ms.backward);
    return { loss: 0, dx: tf.zeros(x.shape) };
  };
}
