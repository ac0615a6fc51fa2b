import { z } from 'zod';

/**
 * The Plan is the contract between the studio, the cost model and the agents: which layers form each
 * pipeline stage, how many data-parallel replicas serve it, how the global batch is cut into
 * micro-batches, and how the optimizer runs. The same document is edited, priced and executed.
 */

export const OptimizerSchema = z.discriminatedUnion('kind', [
  z.object({ kind: z.literal('sgd'), learningRate: z.number().positive(), momentum: z.number().min(0).max(1).default(0) }),
  z.object({
    kind: z.literal('adam'),
    learningRate: z.number().positive(),
    beta1: z.number().min(0).max(1).default(0.9),
    beta2: z.number().min(0).max(1).default(0.999),
    epsilon: z.number().positive().default(1e-7),
  }),
]);
export type OptimizerConfig = z.infer<typeof OptimizerSchema>;

export const StageSchema = z.object({
  /** Layer ids of this stage, in graph order. Stages together cover every layer exactly once. */
  layers: z.array(z.string()).min(1),
  /** Number of data-parallel replicas (one agent each) that run this stage. */
  dataParallel: z.number().int().min(1),
});
export type Stage = z.infer<typeof StageSchema>;

export const PlanSchema = z.object({
  version: z.literal(1),
  model: z.string().min(1),
  stages: z.array(StageSchema).min(1),
  /** Samples per optimizer step across all replicas; the hyperparameters are tied to it. */
  globalBatch: z.number().int().min(1),
  /** Micro-batches each replica splits its share of the global batch into. */
  microBatches: z.number().int().min(1),
  schedule: z.enum(['gpipe', '1f1b', 'async']),
  zero: z.number().int().min(0).max(3).default(0),
  recompute: z.boolean().default(false),
  optimizer: OptimizerSchema,
  seed: z.number().int().min(0),
});
export type Plan = z.infer<typeof PlanSchema>;

/** Parse untrusted plan JSON, throwing one readable message that lists every problem with its path. */
export function parsePlan(input: unknown): Plan {
  const result = PlanSchema.safeParse(input);
  if (result.success) return result.data;
  const problems = result.error.issues.map((issue) => `${issue.path.join('.') || '(plan)'}: ${issue.message}`);
  throw new Error(`The plan is malformed:\n  ${problems.join('\n  ')}`);
}

/** Total agents a plan needs: the sum of every stage's data-parallel degree. */
export function agentsNeeded(plan: Plan): number {
  return plan.stages.reduce((sum, stage) => sum + stage.dataParallel, 0);
}
