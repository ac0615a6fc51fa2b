import { z } from 'zod';
import { AllReduceMeasurementSchema, LayerTimingSchema, LinkMeasurementSchema } from './profile.js';
import { ConfusionSumsSchema, MetricSumSchema } from './evaluation.js';
import { RequestIdSchema, type AgentRequestType } from './agentRequests.js';
import { TimelineEventSchema } from './timeline.js';
import { LocalTensorSchema, WireTensorSchema } from './wireTensor.js';

/**
 * What an agent tells the coordinator: replies to its requests (each echoes the request's
 * `requestId` and says which rank answers), and the unprompted heartbeats, logs and failures.
 * Validated by the coordinator when a frame arrives (agents/coordinator/membership.ts).
 */

const rank = z.number().int().min(0);
const reply = { requestId: RequestIdSchema, rank };

/** The stash of activations kept for backward passes at its peak during a step. */
const stashPeak = z.object({ peakStashed: z.number().int().min(0), peakStashedBytes: z.number().min(0) });
/** An asynchronous stage's own measures of a step (it has no step barrier). */
const asyncStats = z.object({ delay: z.number(), utilization: z.number(), lrMultiplier: z.number(), correction: z.number() });

export const AgentReplySchema = z.discriminatedUnion('type', [
  z.object({ type: z.literal('listening'), ...reply, peerPort: z.number().int() }),
  z.object({ type: z.literal('ready'), ...reply }),
  z.object({
    type: z.literal('stepDone'),
    ...reply,
    step: z.number().int().min(0),
    /**
     * This agent's share of the step's mean loss (non-zero on last-stage agents only). null: it was NaN
     * or ±Infinity, which JSON writes as null; the coordinator stops the run with the step's number.
     */
    loss: z.number().nullable(),
    computeMs: z.number(),
    allReduceMs: z.number(),
    timeline: z.array(TimelineEventSchema).optional(),
    /** Synchronous steps. */
    memory: stashPeak.optional(),
    /** Asynchronous steps: the stage and its own measures. */
    stage: z.number().int().min(0).optional(),
    stats: asyncStats.optional(),
  }),
  z.object({
    type: z.literal('evalDone'),
    ...reply,
    /** What the accuracy counts correct, of `total` rows or positions (0 for a regression loss). */
    correct: z.number(),
    total: z.number(),
    lossSum: z.number(),
    /** Samples whose loss is in lossSum. */
    count: z.number(),
    /** The model's metrics as additive sums, by name. */
    metrics: z.record(z.string(), MetricSumSchema).optional(),
    /** The first classifier output's class counts (last-stage agents that see whole outputs). */
    confusion: ConfusionSumsSchema.optional(),
  }),
  z.object({
    type: z.literal('profileDone'),
    ...reply,
    layers: z.array(LayerTimingSchema),
    optimizerMsPerParam: z.number().optional(),
    optimizerMsPerTensor: z.number().optional(),
    links: z.array(LinkMeasurementSchema),
    allReduce: z.array(AllReduceMeasurementSchema),
  }),
  /** `receivedMs` is stamped by the coordinator on arrival, before anything else delays it. */
  z.object({ type: z.literal('clockReply'), ...reply, agentMs: z.number(), receivedMs: z.number().optional() }),
  /**
   * A stage's state, from its first replica's first shard (others send nulls). With `held`, the state
   * stays with the agent for a peer-to-peer hand-over and only the names travel; otherwise the payload.
   */
  z.object({
    type: z.literal('snapshotData'),
    ...reply,
    stage: z.number().int().min(0),
    tensors: z.array(WireTensorSchema).nullable(),
    optimizerStep: z.number().int().min(0).nullable(),
    held: z.boolean().optional(),
  }),
  /** Restored from a payload or from peers (then with how many and how much). */
  z.object({ type: z.literal('restored'), ...reply, fromPeers: z.number().int().optional(), bytes: z.number().optional() }),
  /** `rank` is null when the agent had not been set up (it had nothing to undo). */
  z.object({ type: z.literal('aborted'), requestId: RequestIdSchema, rank: rank.nullable(), step: z.number().int().min(0), undone: z.boolean() }),
  /** What this agent holds alone (its slices where split); `complete`: its optimizer state is whole, not a ZeRO shard. */
  z.object({
    type: z.literal('localStateData'),
    ...reply,
    stage: z.number().int().min(0),
    replica: z.number().int().min(0),
    shard: z.number().int().min(0),
    tensors: z.array(LocalTensorSchema),
    optimizerStep: z.number().int().min(0),
    complete: z.boolean(),
  }),
  z.object({ type: z.literal('remapped'), ...reply }),
]);
export type AgentReply = z.infer<typeof AgentReplySchema>;
export type AgentReplyType = AgentReply['type'];

/** Messages an agent sends on its own. */
export const AgentNoticeSchema = z.discriminatedUnion('type', [
  z.object({ type: z.literal('heartbeat') }),
  z.object({ type: z.literal('log'), level: z.enum(['info', 'warn', 'error']), message: z.string() }),
  /** Work failed here; `generation` says which generation's work (a late report of an old one is ignored). */
  z.object({ type: z.literal('failed'), rank: rank.nullable(), generation: z.number().int(), step: z.number().int().nullable(), message: z.string() }),
]);
export type AgentNotice = z.infer<typeof AgentNoticeSchema>;

/** Everything an agent sends the coordinator. */
export const AgentMessageSchema = z.discriminatedUnion('type', [...AgentReplySchema.options, ...AgentNoticeSchema.options]);
export type AgentMessage = z.infer<typeof AgentMessageSchema>;

/** Which reply answers which request (asyncRun: one stepDone per step; dropState and shutdown: none). */
export const REPLY_TO = {
  listen: 'listening',
  setup: 'ready',
  step: 'stepDone',
  asyncRun: 'stepDone',
  eval: 'evalDone',
  profile: 'profileDone',
  clock: 'clockReply',
  snapshot: 'snapshotData',
  fetchState: 'restored',
  restore: 'restored',
  abort: 'aborted',
  localState: 'localStateData',
  remap: 'remapped',
} as const satisfies Partial<Record<AgentRequestType, AgentReplyType>>;
export type AskedType = keyof typeof REPLY_TO;
export type ReplyTo<T extends AskedType> = Extract<AgentReply, { type: (typeof REPLY_TO)[T] }>;
