import type { StageFacts } from './stageFacts.js';

/**
 * Fixed costs of the runtime that no FLOP count sees, and that decide plans for small models: a
 * pipeline of four stages and 32 micro-batches over a model of a thousand weights is all overhead.
 * Used where no profile measured the layers (a profile's per-call times and measured links include them).
 */
export interface RuntimeOverheads {
  /** One layer's forward call: tfjs's op dispatch and a kernel launch, whatever the layer's size. */
  perLayerCallMs: number;
  /** One micro-batch through a stage, each pass: slicing the batch, packing tensors, the schedule's bookkeeping. */
  perMicroBatchMs: number;
  /** One message between agents (activation, gradient, a collective's hop), on top of the wire's latency. */
  perMessageMs: number;
}

/**
 * Defaults from measurements of this runtime (tfjs 4.22, cpu backend, Node 20): a dense-bias-relu
 * call on 4 samples took 0.18 ms forward and 0.84 ms forward and backward on the 2-core development
 * machine under a load of 9 (other jobs), so an idle core's 0.1 ms is taken, a backward call counting
 * as two forward ones as its FLOPs do; the executor's batch gather is 0.17 ms per step
 * (bench/results/executor.json); a 1 KB all-reduce of 2 agents, two messages, takes 0.085 ms
 * (bench/results/allreduce.json).
 */
export const DEFAULT_OVERHEADS: RuntimeOverheads = { perLayerCallMs: 0.1, perMicroBatchMs: 0.2, perMessageMs: 0.04 };

/** For an idealised cluster, or where measured layer times already include them. */
export const NO_OVERHEADS: RuntimeOverheads = { perLayerCallMs: 0, perMicroBatchMs: 0, perMessageMs: 0 };

export function runtimeOverheads(options: { overheads?: Partial<RuntimeOverheads> }): RuntimeOverheads {
  return { ...DEFAULT_OVERHEADS, ...options.overheads };
}

/** Fixed milliseconds one micro-batch adds to a stage's forward and backward passes. */
export function passOverheadMs(f: StageFacts, o: RuntimeOverheads): { forwardMs: number; backwardMs: number } {
  const n = f.layerCalls;
  return { forwardMs: o.perMicroBatchMs + n * o.perLayerCallMs, backwardMs: o.perMicroBatchMs + 2 * n * o.perLayerCallMs };
}
