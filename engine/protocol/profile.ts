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
  /** The layer's backward alone: its gradient call minus its forward (the gradient call recomputes it). */
  backwardMs: z.number().min(0),
  forwardMsPerSample: z.number().min(0),
  backwardMsPerSample: z.number().min(0),
  /** Per-sample FLOPs of the layer (model facts), to turn times into a sustained FLOP/s. */
  forwardFlops: z.number().min(0),
  backwardFlops: z.number().min(0),
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
});
export type JobProfile = z.infer<typeof JobProfileSchema>;
