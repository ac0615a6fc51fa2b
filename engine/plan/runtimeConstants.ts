/**
 * Constants of how the agents run a plan that the cost model prices. The runtime, the cost model and
 * the studio all read them from here, so a prediction is made for the very run the agents perform:
 * when one of these changes, the Monitor, the plan editor, the Runs view and the agents change with it.
 * (The order of a schedule's forward and backward passes, which sets how many micro-batches a stage
 * keeps in flight, is shared the same way: engine/sim/scheduleOrder.ts.)
 */

/**
 * Bytes of gradients per data-parallel all-reduce bucket: large enough that per-message costs are
 * small, small enough that the first buckets go on the wire while earlier layers still compute. The
 * cost model prices the overlap and the communication buffers with it.
 */
export const GRADIENT_BUCKET_BYTES = 4 << 20;

/**
 * Seconds an agent may stay silent — no message, not even a heartbeat — before the coordinator fences
 * it out of the job. A dead agent is noticed at once (its connection closes); this bound is for one that
 * is stopped (SIGSTOP), hung, or behind a partitioned network. It is long, as torchrun's and Horovod's
 * are, because a healthy agent on a loaded machine can go seconds without being scheduled; time the
 * coordinator itself was not running (paused, starved) is not counted against the agents.
 */
export const HEARTBEAT_TIMEOUT_SEC = 30;

/** How often an agent tells the coordinator it is alive. */
export const HEARTBEAT_INTERVAL_MS = 1000;
