import { z } from 'zod';

/**
 * One interval on one device's timeline. The simulator predicts these and the agents will measure
 * them, in the same schema, so the studio can overlay prediction and measurement on one axis.
 * Times are milliseconds from the start of the step. Measured events also say which agent (rank,
 * replica) ran them; the coordinator moves every agent's clock onto its own axis before it emits them
 * (engine/protocol/clockAlign.ts), so events of different agents compare.
 */
export const TimelineKindSchema = z.enum(['forward', 'backward', 'send', 'recv', 'allreduce', 'optimizer']);
export type TimelineKind = z.infer<typeof TimelineKindSchema>;

export const TimelineEventSchema = z.object({
  /** Pipeline stage of the device (every replica of a stage shares its predicted timeline). */
  stage: z.number().int().min(0),
  kind: TimelineKindSchema,
  /** Micro-batch index for forward, backward, send and recv. */
  micro: z.number().int().min(0).optional(),
  startMs: z.number(),
  endMs: z.number(),
  /** Bytes moved, for communication events. */
  bytes: z.number().optional(),
  /** Measured events: the agent that ran it and its data-parallel replica. */
  rank: z.number().int().min(0).optional(),
  replica: z.number().int().min(0).optional(),
  /**
   * A last stage turns a micro-batch around in one call (forward, loss and backward): measured as one
   * `forward` event with `fused` set, which covers that micro-batch's backward too.
   */
  fused: z.boolean().optional(),
});
export type TimelineEvent = z.infer<typeof TimelineEventSchema>;
