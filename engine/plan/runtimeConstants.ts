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
