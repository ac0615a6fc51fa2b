/**
 * Blocking waits of the calling thread, without dependencies (benchmark peers import them too): how
 * synthetic stages take their time, and how a slowed agent emulates a slower device.
 */

// Never notified: waiting on it is a pure, timed sleep of this thread.
const sleeper = new Int32Array(new SharedArrayBuffer(4));

/**
 * Atomics.wait wakes 0.15–0.6 ms late here (timer slack): it is asked to wake this much early, and the
 * rest is spun. Without it, a stage of two passes per micro-batch (forward and backward) ran about
 * 0.5 ms longer per micro-batch than one of a single fused pass, so "equal" stages were not.
 */
const SPIN_MS = 1;

/**
 * Block the calling thread for `ms`, using a core for at most the last millisecond. Atomics.wait parks
 * the thread in the kernel, so several stages on fewer cores measure the schedule rather than
 * competing for the CPU (a busy loop would).
 */
export function sleepThread(ms: number): void {
  const until = performance.now() + ms;
  for (let left = ms; left > SPIN_MS; left = until - performance.now()) Atomics.wait(sleeper, 0, 0, left - SPIN_MS);
  spinThread(until - performance.now());
}

/** Hold the calling thread's core for `ms`. */
export function spinThread(ms: number): void {
  const until = performance.now() + ms;
  while (performance.now() < until);
}
