import { z } from 'zod';

/**
 * How long a synthetic stage's passes take per micro-batch, in milliseconds, and how they wait. A
 * benchmark asks for it in the job's coordinator config; agents/exec/syntheticStage.ts applies it.
 */
export const SyntheticStageMsSchema = z.object({
  forward: z.number().min(0),
  backward: z.number().min(0),
  /**
   * Hold the core for the whole pass, as real arithmetic does, instead of sleeping. Only where every
   * stage has a core of its own. A sleeping thread leaves its CPU idle, and on this kind of virtual
   * machine the first moments after an idle CPU wakes run several times slower (measured: 0.3–0.9 ms
   * for work that takes 0.02 ms on a busy CPU). That slowness lands on the transfers after each pass:
   * p = 2, m = 16 1F1B measured a bubble of 0.080–0.106 asleep and 0.064–0.068 busy (theory 0.059).
   * Real stages keep their cores busy and do not pay it.
   */
  busy: z.boolean().optional(),
});
export type SyntheticStageMs = z.infer<typeof SyntheticStageMsSchema>;
