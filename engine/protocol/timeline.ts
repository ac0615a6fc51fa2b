import { z } from 'zod';

/**
 * One interval on one device's timeline. The simulator predicts these and the agents will measure
 * them, in the same schema, so the studio can overlay prediction and measurement on one axis.
 * Times are milliseconds from the start of the step.
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
});
export type TimelineEvent = z.infer<typeof TimelineEventSchema>;
