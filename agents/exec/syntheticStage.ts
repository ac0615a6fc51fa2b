import * as tf from '@tensorflow/tfjs-core';
import type { StageModule } from './stageModule.js';

/** How long a synthetic stage's passes take per micro-batch, in milliseconds. */
export interface SyntheticStageMs {
  forward: number;
  backward: number;
}

// Never notified: waiting on it is a pure, timed sleep of this thread.
const sleeper = new Int32Array(new SharedArrayBuffer(4));

/**
 * Block the calling thread for `ms` without using a core. Atomics.wait parks the thread in the kernel,
 * so several stages on fewer cores measure the schedule rather than competing for the CPU (a busy loop
 * would). The loop guards against an early return.
 */
export function sleepThread(ms: number): void {
  const until = performance.now() + ms;
  for (let left = ms; left > 0; left = until - performance.now()) Atomics.wait(sleeper, 0, 0, left);
}

/**
 * Turn a stage module into a synthetic one: its forward and backward passes do no arithmetic, they take
 * exactly the given time per micro-batch and return zeros of the right shapes. Everything around them
 * — receives, sends, schedule order, gradient hand-over, optimizer updates — runs for real, so a job of
 * synthetic stages measures a schedule's utilization with stages of known, equal cost. No parameter
 * gradient is accumulated: updates apply zeros (takeGradients' default).
 */
export function makeSynthetic(module: StageModule, ms: SyntheticStageMs): void {
  module.forward = (x) => {
    sleepThread(ms.forward);
    return tf.zeros([x.shape[0], ...module.outputShape]);
  };
  module.trainForward = module.forward;
  // backward() and lossBackward() run these to the end; the schedules may also step through them.
  module.backwardSteps = function* (x) {
    sleepThread(ms.backward);
    return tf.zeros(x.shape);
  };
  // The last stage turns a micro-batch around in one call: its forward and its backward.
  module.lossBackwardSteps = function* (x) {
    sleepThread(ms.forward + ms.backward);
    return { loss: 0, dx: tf.zeros(x.shape) };
  };
}
