import { z } from 'zod';

/**
 * What agents measure at the start of a job, as the coordinator writes it to `profile.json` in the
 * run folder: per-layer forward and backward times of every agent's stage, latency (α) and bandwidth
 * (β) of every link between agents that talk, and each agent's clock offset from the coordinator.
 * engine/cost/calibrate.ts turns it into the cost model's CostProfile.
 */
export const LayerTimingSchema = z.object({
  /** Layer id in the model graph. */
  id: z.string(),
  rank: z.number().int().min(0),
  /** Device index of the agent (plans place ranks on devices). */
  device: z.number().int().min(0),
  /** Samples in the timed batch. */
  batch: z.number().int().min(1),
  /** Median milliseconds of one call over the repetitions (after warm-up). */
  forwardMs: z.number().min(0),
  /**
   * The layer's backward alone, as the stage's backward pass runs it (agents/exec/layerGradient.ts:
   * Dense layers by hand from the kept activations, others through tf.grads less their forward).
   */
  backwardMs: z.number().min(0),
  forwardMsPerSample: z.number().min(0),
  backwardMsPerSample: z.number().min(0),
  /** Per-sample FLOPs of the layer (model facts), to turn times into a sustained FLOP/s. */
  forwardFlops: z.number().min(0),
  backwardFlops: z.number().min(0),
  /**
   * How many agents of the job were timing layers at the same moment (absent: this one alone, the
   * others idle). A round with every agent busy at once measures how much they slow each other down
   * when they share a host's cores.
   */
  concurrent: z.number().int().min(1).optional(),
});
export type LayerTiming = z.infer<typeof LayerTimingSchema>;

export const LinkMeasurementSchema = z.object({
  from: z.number().int().min(0),
  to: z.number().int().min(0),
  /** Device indices of the two ranks. */
  fromDevice: z.number().int().min(0),
  toDevice: z.number().int().min(0),
  /** One-way latency, seconds: half the smallest round trip of a tiny message. */
  alpha: z.number().min(0),
  /** Bytes per second of a large message (its smallest one-way time less α). */
  beta: z.number().positive(),
  rttMs: z.number().min(0),
});
export type LinkMeasurement = z.infer<typeof LinkMeasurementSchema>;

/**
 * One timed all-reduce of `bytes` over `members` agents as the data-parallel gradient synchronisation
 * runs it (copying the gradients into a flat buffer, the ring's transfers and summation on the CPU):
 * the median milliseconds over the repetitions on one agent.
 */
export const AllReduceMeasurementSchema = z.object({
  rank: z.number().int().min(0),
  device: z.number().int().min(0),
  /** 1: the copies alone, timed while the other agents wait (no communication). */
  members: z.number().int().min(1),
  bytes: z.number().int().min(1),
  ms: z.number().min(0),
});
export type AllReduceMeasurement = z.infer<typeof AllReduceMeasurementSchema>;

export const AgentProfileSchema = z.object({
  rank: z.number().int().min(0),
  stage: z.number().int().min(0),
  replica: z.number().int().min(0),
  device: z.number().int().min(0),
  host: z.string(),
  backend: z.string(),
  /** Agent clock minus coordinator clock, ms, from the ping-pong sample with the smallest round trip. */
  clockOffsetMs: z.number(),
  clockRttMs: z.number().min(0),
  /** One optimizer update costs optimizerMsPerTensor per weight tensor + optimizerMsPerParam per parameter. */
  optimizerMsPerParam: z.number().min(0).optional(),
  optimizerMsPerTensor: z.number().min(0).optional(),
  /** True when the stage was synthetic (benchmarks): its layer times are real, its steps are not. */
  synthetic: z.boolean().optional(),
});
export type AgentProfile = z.infer<typeof AgentProfileSchema>;

export const JobProfileSchema = z.object({
  version: z.literal(1),
  model: z.string(),
  /** Local wall-clock time the profile was taken (ISO). */
  createdAt: z.string(),
  /**
   * How the profiled job's executor ran a stage: whether a stage that is not the last recomputed its
   * forward inside its backward (the plan's `recompute`). The layer times above do not depend on it.
   */
  executor: z.object({ recomputeForward: z.boolean() }),
  agents: z.array(AgentProfileSchema),
  layers: z.array(LayerTimingSchema),
  links: z.array(LinkMeasurementSchema),
  /** Timed gradient all-reduces (absent in older profiles, or when no two agents could form a group). */
  allReduce: z.array(AllReduceMeasurementSchema).optional(),
});
export type JobProfile = z.infer<typeof JobProfileSchema>;
