import { z } from 'zod';
import { validationFields } from './evaluation.js';
import { JobProfileSchema } from './profile.js';
import { TimelineEventSchema } from './timeline.js';

/**
 * What a running job tells the studio and the command line. The coordinator emits these; the studio
 * and `shoal train --json` consume the same stream, so a chart and a script see one truth.
 */
export const JobStateSchema = z.enum(['starting', 'running', 'finished', 'failed', 'stopped']);
export type JobState = z.infer<typeof JobStateSchema>;

/** The device an agent runs on and the backend it chose there, with why (agents/backend/agentDevice.ts). */
export const AgentDeviceSchema = z.object({
  kind: z.enum(['gpu', 'cpu']),
  /** The GPU's name where the backend runs on it, else this host's CPU ("16 × AMD EPYC …"). */
  name: z.string(),
  /** The GPU it is pinned to (CUDA_VISIBLE_DEVICES), also when the backend runs on the CPU. */
  gpu: z.object({ index: z.number().int(), name: z.string(), memoryBytes: z.number(), uuid: z.string() }).optional(),
  cudaVisibleDevices: z.string().optional(),
  backend: z.string(),
  /** What was chosen and why each faster backend was skipped. */
  reason: z.string(),
});
export type AgentDevice = z.infer<typeof AgentDeviceSchema>;

export const JobEventSchema = z.discriminatedUnion('type', [
  z.object({ type: z.literal('status'), state: JobStateSchema, message: z.string().optional(), time: z.number() }),
  z.object({
    type: z.literal('agent'),
    rank: z.number().int(),
    stage: z.number().int(),
    replica: z.number().int(),
    host: z.string(),
    pid: z.number().int(),
    backend: z.string(),
    /** Absent in histories from before agents reported it. */
    device: AgentDeviceSchema.optional(),
  }),
  /**
   * Who holds which rank from a step on: the first generation, and every later one after a resize
   * or a lost agent. `virtualNodes` is each rank's share of the fixed global batch.
   */
  z.object({
    type: z.literal('membership'),
    generation: z.number().int(),
    step: z.number().int(),
    reason: z.string(),
    /** The resize request this generation answers (the id its `accepted` reply carried). */
    requestId: z.string().optional(),
    /** The agents training in this generation, one per rank. */
    agents: z.array(
      z.object({ rank: z.number().int(), stage: z.number().int(), replica: z.number().int(), shard: z.number().int(), host: z.string(), pid: z.number().int(), virtualNodes: z.number().int() }),
    ),
    /** Live agents outside the generation (no layout of the job uses them all), and why. Absent in older histories: none. */
    waiting: z.array(z.object({ host: z.string(), pid: z.number().int(), reason: z.string() })).optional(),
    /** Agents the job has lost so far (crashed, killed, fenced); absent in older histories. */
    lost: z.number().int().min(0).optional(),
  }),
  z.object({
    type: z.literal('step'),
    step: z.number().int(),
    epoch: z.number(),
    loss: z.number(),
    samplesPerSec: z.number(),
    stepMs: z.number(),
    /** Longest time an agent waited for gradient communication after its backward pass (synchronous schedules). */
    commWaitMs: z.number().optional(),
    elapsedMs: z.number(),
  }),
  z.object({
    type: z.literal('eval'),
    step: z.number().int(),
    epoch: z.number(),
    ...validationFields,
  }),
  z.object({
    type: z.literal('log'),
    level: z.enum(['info', 'warn', 'error']),
    host: z.string(),
    rank: z.number().int().nullable(),
    message: z.string(),
    time: z.number(),
    /** The resize request this line answers: a refusal (warn) ends the requester's wait. */
    requestId: z.string().optional(),
  }),
  z.object({
    /**
     * Per-stage health of a pipeline, once per step and stage. Asynchronous (PipeMare) stages report all
     * four; synchronous ones report utilization (compute over the whole step) with delay 0, lr ×1, no correction.
     */
    type: z.literal('pipeline'),
    step: z.number().int(),
    stage: z.number().int(),
    /** Optimizer updates between a micro-batch's forward pass and the update applying its gradient. */
    delay: z.number(),
    /** Share of wall time the stage computed. */
    utilization: z.number(),
    lrMultiplier: z.number(),
    /** Relative size of the discrepancy correction ‖τ·δ‖/‖w‖ (0 when off). */
    correction: z.number(),
    /** Whether the schedule is asynchronous (PipeMare): only then do delay, lr and correction mean anything. */
    asynchronous: z.boolean().optional(),
  }),
  z.object({
    /**
     * The measured timeline of one synchronous step (sampled every few steps to bound the volume): every
     * agent's events on the coordinator's clock, in ms from `originMs` (coordinator wall clock, epoch ms,
     * when it started the step), plus each agent's peak of stashed activations during the step.
     */
    type: z.literal('timeline'),
    step: z.number().int(),
    originMs: z.number(),
    events: z.array(TimelineEventSchema),
    memory: z.array(z.object({ rank: z.number().int(), stage: z.number().int(), replica: z.number().int(), peakStashed: z.number().int(), peakStashedBytes: z.number() })),
  }),
  /** What the agents measured at the start of the job (also written to profile.json in the run folder). */
  z.object({ type: z.literal('profile'), profile: JobProfileSchema, path: z.string().nullable() }),
  z.object({
    type: z.literal('checkpoint'),
    action: z.enum(['saved', 'restored']),
    /** Optimizer steps completed when the checkpoint was taken; training continues at this step. */
    step: z.number().int(),
    path: z.string(),
    bytes: z.number(),
    time: z.number(),
  }),
  z.object({
    type: z.literal('final'),
    final: z.literal(true),
    ...validationFields,
    steps: z.number().int(),
    epochs: z.number(),
    seconds: z.number(),
    samplesPerSec: z.number(),
    backends: z.array(z.string()),
  }),
]);
export type JobEvent = z.infer<typeof JobEventSchema>;
export type StepEvent = Extract<JobEvent, { type: 'step' }>;
export type EvalEvent = Extract<JobEvent, { type: 'eval' }>;
export type FinalEvent = Extract<JobEvent, { type: 'final' }>;
export type TimelineJobEvent = Extract<JobEvent, { type: 'timeline' }>;
export type ProfileEvent = Extract<JobEvent, { type: 'profile' }>;

/**
 * A job event checked by its `type` only: a history can be replayed from an events.jsonl written by an
 * earlier coordinator, and every consumer reads events by their `type` (JobEventSchema describes them).
 */
export const JobEventByTypeSchema = z.custom<JobEvent>((v) => typeof v === 'object' && v !== null && typeof (v as { type?: unknown }).type === 'string', { message: 'expected a job event' });

/** A job event with its place in the job's history: how the studio tells a repeated event from a new one. */
export const IndexedJobEventSchema = z.object({ index: z.number().int().min(0), event: JobEventByTypeSchema });
export type IndexedJobEvent = z.infer<typeof IndexedJobEventSchema>;
