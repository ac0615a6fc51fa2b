import type { TimelineEvent } from '../protocol/timeline.js';
import type { RuntimeOverheads } from './runtimeOverheads.js';

/** Memory one device needs for a plan, by purpose, in bytes. */
export interface MemoryBreakdown {
  parameters: number;
  gradients: number;
  optimizer: number;
  /** Activations kept for the backward pass × micro-batches in flight under the schedule. */
  activations: number;
  /** Communication buffers (all-reduce buckets, activation send/receive buffers). */
  buffers: number;
  /** The runtime's copies: parameters and optimizer state kept to undo a discarded step; ZeRO's chunk variables. */
  copies: number;
  /** What the optimizer's update holds beyond the model state: the gradients it reads and its temporaries. */
  update: number;
  /** At the step's high point: model state, the copies, and the larger of the passes' and the update's needs. */
  total: number;
}

export interface DeviceCost {
  device: number;
  rank: number;
  stage: number;
  replica: number;
  shard: number;
  memory: MemoryBreakdown;
  capacityBytes: number;
  fits: boolean;
}

/** Bytes a link carries in one step, between two devices (ordered by index). */
export interface LinkTraffic {
  from: number;
  to: number;
  bytes: number;
}

/**
 * The prediction for one plan on one cluster: the same numbers the studio shows while a user edits
 * and the planner ranks by.
 */
export interface PlanCost {
  stepMs: number;
  samplesPerSec: number;
  /**
   * stepMs = computeMs + exposedCommMs + bubbleMs + fixedOverheadMs, taken along the critical (slowest)
   * stage. bubbleMs is idle time the pipeline schedule causes (0 with one stage); fixedOverheadMs is
   * what calibration measured but could not attribute to layers or links (the coordinator's round trip).
   */
  breakdown: { computeMs: number; exposedCommMs: number; bubbleMs: number; fixedOverheadMs: number };
  /** Idle share of the pipeline phase across stages: (p−1)/(m+p−1) on uniform synchronous stages. */
  bubbleFraction: number;
  /** Per stage, for the stage editor. */
  stages: Array<{ stage: number; forwardMs: number; backwardMs: number; allReduceMs: number; computeMs: number; exposedCommMs: number }>;
  devices: DeviceCost[];
  /** Largest total memory of any device, and whether every device fits. */
  peakMemoryBytes: number;
  fits: boolean;
  /** Bytes sent over all links in one step (point-to-point, all-reduce, tensor-parallel collectives). */
  commBytesPerStep: number;
  links: LinkTraffic[];
  /** Predicted timeline of one step, per stage, in the schema agents emit. */
  timeline: TimelineEvent[];
}

/**
 * Measurements that override datasheet numbers: per-layer times from a real run (milliseconds per
 * sample, forward and backward, on a given device model) and measured links between devices.
 */
export interface CostProfile {
  /**
   * Per layer: a call on b samples takes perCall + b · perSample milliseconds (perCall absent = 0). The
   * backward is the layer's own backward, without the forward a recomputing executor repeats.
   */
  layers?: Record<
    string,
    {
      device: string;
      forwardMsPerSample: number;
      backwardMsPerSample: number;
      forwardMsPerCall?: number;
      backwardMsPerCall?: number;
      /** Median times at the batch sizes that were timed: a batch between two of them is interpolated. */
      points?: Array<{ batch: number; forwardMs: number; backwardMs: number }>;
    }
  >;
  /** Sustained FLOP/s measured per device index. */
  deviceFlops?: Record<number, number>;
  /** Measured α (s) / β (bytes/s) per device pair, keyed "a-b" with a < b. */
  links?: Record<string, { alpha: number; beta: number }>;
  /** Measured cost of one optimizer update, per device model: per parameter, and per weight tensor (op overhead). */
  optimizerMsPerParam?: Record<string, number>;
  optimizerMsPerTensor?: Record<string, number>;
  /**
   * How much slower compute runs when k agents of a host compute at once (k → factor ≥ 1): cores,
   * caches and memory bandwidth are shared. Applied to plans with k agents on one host.
   */
  contention?: Record<number, number>;
  /**
   * Effective α (s) and β (bytes/s) of the data-parallel gradient all-reduce inside one host as the
   * runtime runs it (copies, ring transfers, summation on the CPU), fitted from timed all-reduces of
   * `members` agents; used instead of the links for rings within a host.
   */
  allReduce?: { alpha: number; beta: number; members: number };
  /**
   * The runtime's gradient hand-over every step, data parallel or not: each bucket copied out of the
   * gradient tensors into a flat array and back into tensors for the update.
   */
  gradientCopy?: { msPerBucket: number; msPerByte: number };
  /** Fixed cost of a synchronous step: the coordinator's message to the agents and their replies. */
  stepOverheadMs?: number;
  /** Whether the profiled job recomputed forwards in its backward passes (informational; plans say `recompute`). */
  recomputeForward?: boolean;
}

export interface CostOptions {
  profile?: CostProfile;
  /** The runtime's fixed costs where no profile measured them (engine/cost/runtimeOverheads.ts's defaults). */
  overheads?: Partial<RuntimeOverheads>;
  /** Bytes per element of weights, gradients and activations; tfjs trains in float32. */
  bytesPerElement?: number;
  /** Hide gradient all-reduce behind the backward pass in buckets of this many bytes (0 = no overlap; default: the agents' GRADIENT_BUCKET_BYTES). */
  allReduceBucketBytes?: number;
  /** Compute at fp16/bf16 tensor-core speed and keep mixed-precision state (for sizing GPU clusters). */
  precision?: 'fp32' | 'mixed';
  /**
   * How activations are counted: `minimal` (the default) what backward needs (Korthikanti et al.'s
   * count, engine/model/facts/kept.ts); `tfjs` what the agents' tfjs executor holds in float32, tapes
   * and copies included (engine/model/facts/tape.ts), which `bench -- memory` holds to the measured peak.
   */
  activations?: 'minimal' | 'tfjs';
}
