import { z } from 'zod';
import { TrainingSetupSchema } from './trainingSetup.js';
import { ModelGraphSchema } from './processConfig.js';
import { SyntheticStageMsSchema } from './syntheticStage.js';
import { PlacedTensorSchema } from './wireTensor.js';

/**
 * What the coordinator asks of an agent: one discriminated union, validated by the agent when a frame
 * arrives and dispatched by an exhaustive switch (agents/runtime/agentProcess.ts). A request that
 * expects replies carries a `requestId`; every reply echoes it (agentReplies.ts), which is how the
 * coordinator pairs them (agents/coordinator/generation.ts). Tensors travel as the binary payload,
 * described by the header, never parsed.
 */

/** Pairs a request with its replies: unique within a coordinator's life, never reused. */
export const RequestIdSchema = z.number().int().min(0).brand<'RequestId'>();
export type RequestId = z.infer<typeof RequestIdSchema>;

const placement = z.object({ rank: z.number().int().min(0), stage: z.number().int().min(0), replica: z.number().int().min(0), shard: z.number().int().min(0), device: z.number().int().min(0) });
const peer = z.object({ rank: z.number().int().min(0), host: z.string(), port: z.number().int() });
/** Where to fetch which tensors in a peer-to-peer hand-over: a holder's peer address and the names it has that we need. */
export const StateSourceSchema = z.object({ host: z.string(), port: z.number().int(), names: z.array(z.string()) });
export type StateSource = z.infer<typeof StateSourceSchema>;

export const AgentRequestSchema = z.discriminatedUnion('type', [
  /** A new generation: forget the stage and links, listen afresh; answered by `listening`. */
  z.object({ type: z.literal('listen'), requestId: RequestIdSchema, generation: z.number().int(), rank: z.number().int().min(0) }),
  /** This agent's part of the plan; answered by `ready` once linked up with its peers. */
  z.object({
    type: z.literal('setup'),
    requestId: RequestIdSchema,
    generation: z.number().int(),
    rank: z.number().int().min(0),
    placement,
    /** Checked by parsePlan on the agent, which explains a bad plan with coded diagnostics. */
    plan: z.unknown(),
    model: ModelGraphSchema,
    /** Data and losses; absent: the built-in models' MNIST digits and cross-entropy. */
    training: TrainingSetupSchema.optional(),
    peers: z.array(peer),
    /** Benchmarks only: stages that sleep this long per micro-batch instead of computing. */
    syntheticStageMs: SyntheticStageMsSchema.optional(),
    /** Start gradient all-reduces during the step's last backward pass. */
    overlapGradients: z.boolean(),
  }),
  /** Run one synchronous step; answered by `stepDone`. */
  z.object({ type: z.literal('step'), requestId: RequestIdSchema, step: z.number().int().min(0), timeline: z.boolean() }),
  /**
   * Stream asynchronous steps [fromStep, toStep): step s is answered by a `stepDone` with request id
   * firstRequestId + (s − fromStep), so the coordinator pairs each step as it would a request of its own.
   */
  z.object({ type: z.literal('asyncRun'), firstRequestId: RequestIdSchema, fromStep: z.number().int().min(0), toStep: z.number().int().min(0), timelineEverySteps: z.number().int().min(0) }),
  /** Forward the validation split; answered by `evalDone`. */
  z.object({ type: z.literal('eval'), requestId: RequestIdSchema, evalId: z.number().int().min(0) }),
  /** Time layers, links and all-reduces (profileLayers.ts says what each field asks); answered by `profileDone`. */
  z.object({
    type: z.literal('profile'),
    requestId: RequestIdSchema,
    batches: z.array(z.number().int().min(1)).optional(),
    repeats: z.number().int().min(1).optional(),
    layers: z.enum(['stage', 'model', 'none']).optional(),
    concurrent: z.number().int().min(1).optional(),
    links: z.boolean().optional(),
    allReduceBytes: z.array(z.number()).optional(),
    turn: z.number().int().nullable().optional(),
  }),
  /** An NTP-style ping, answered at once (outside the queue) by `clockReply`. */
  z.object({ type: z.literal('clock'), requestId: RequestIdSchema }),
  /** Gather the stage's state; `keep`: hold it here for the next generation to fetch (a resize). Answered by `snapshotData`. */
  z.object({ type: z.literal('snapshot'), requestId: RequestIdSchema, keep: z.boolean().optional() }),
  /** Fetch this stage's tensors from the holders; answered by `restored`. */
  z.object({ type: z.literal('fetchState'), requestId: RequestIdSchema, sources: z.array(StateSourceSchema), optimizerStep: z.number().int().min(0) }),
  /** Load this stage's tensors from the payload (a checkpoint or the survivors' state); answered by `restored`. */
  z.object({ type: z.literal('restore'), requestId: RequestIdSchema, tensors: z.array(PlacedTensorSchema), optimizerStep: z.number().int().min(0) }),
  /** The held snapshot was handed over: free it. */
  z.object({ type: z.literal('dropState') }),
  /** Discard step `step` (a peer was lost): undo it if it got as far as the update; answered by `aborted`. */
  z.object({ type: z.literal('abort'), requestId: RequestIdSchema, step: z.number().int().min(0) }),
  /** Report the state this agent holds alone (after a lost agent); answered by `localStateData`. */
  z.object({ type: z.literal('localState'), requestId: RequestIdSchema }),
  /** Another split of the virtual nodes over the same ranks (a re-balance by speed); answered by `remapped`. */
  z.object({ type: z.literal('remap'), requestId: RequestIdSchema, plan: z.unknown() }),
  /** The job is over (or this agent was released): exit. */
  z.object({ type: z.literal('shutdown') }),
]);
export type AgentRequest = z.infer<typeof AgentRequestSchema>;
export type AgentRequestType = AgentRequest['type'];
export type AgentRequestOf<T extends AgentRequestType> = Extract<AgentRequest, { type: T }>;

/** The id `n` places after `first` (an asynchronous run's step s answers firstRequestId + s − fromStep). */
export const nthRequestId = (first: RequestId, n: number): RequestId => (first + n) as RequestId;
