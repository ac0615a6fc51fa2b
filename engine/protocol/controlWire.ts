import { z } from 'zod';
import { IndexedJobEventSchema } from './events.js';
import { PlacedTensorSchema } from './wireTensor.js';

/**
 * The frames of the coordinator's other connections: a controller's resize requests (`shoal resize`,
 * the studio), the event stream a studio follows, and the state hand-over between agents' peer
 * listeners during a resize. (Coordinator ⇄ agent messages: agentRequests.ts, agentReplies.ts.)
 */

/** A controller's request, applied at the next step boundary: a change of membership, or a stop. */
export const ControlRequestSchema = z.discriminatedUnion('type', [
  z.object({
    type: z.literal('resize'),
    /** Agents expected to join (they connect on their own). */
    add: z.number().int().min(0).default(0),
    /** Ranks of the current generation to release. */
    remove: z.array(z.number().int().min(0)).default([]),
  }),
  /**
   * Save a checkpoint at the next step boundary and stop (Ctrl-C in `shoal train`): the job ends
   * with a `stopped` status that names the checkpoint.
   */
  z.object({ type: z.literal('checkpointAndStop') }),
]);
export type ControlRequest = z.infer<typeof ControlRequestSchema>;

export const ControlReplySchema = z.discriminatedUnion('type', [
  /** Queued; the membership event that applies it carries `requestId`. */
  z.object({ type: z.literal('accepted'), requestId: z.string() }),
  z.object({ type: z.literal('error'), message: z.string() }),
]);
export type ControlReply = z.infer<typeof ControlReplySchema>;

/** One event of the job's history, numbered; the event is checked by its type (JobEventByTypeSchema says why). */
export const EventFrameSchema = z.object({ type: z.literal('event'), ...IndexedJobEventSchema.shape });
export type EventFrame = z.infer<typeof EventFrameSchema>;

/** A state holder's answer to a peer fetching tensors (its request is the handshake's hello). */
export const StateReplySchema = z.discriminatedUnion('type', [
  z.object({ type: z.literal('stateData'), tensors: z.array(PlacedTensorSchema), optimizerStep: z.number().int().min(0) }),
  z.object({ type: z.literal('stateError'), message: z.string() }),
]);
export type StateReply = z.infer<typeof StateReplySchema>;
