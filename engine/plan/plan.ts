import { z } from 'zod';
import { DiagnosticError, type Diagnostic } from './diagnostics.js';
import { LIMITS } from './limits.js';
import { planSizeProblems } from './planSize.js';
import { LayerShardingSchema } from './sbp.js';
import { unknownFields } from './unknownFields.js';

/**
 * The Plan is the contract between the studio, the cost model and the agents: which layers form each
 * pipeline stage, which devices serve it and how (data-parallel replicas, operator sharding), how the
 * global batch is cut into virtual nodes and micro-batches, and how the optimizer runs. The same
 * document is edited, priced and executed. Fields added after version 1 are optional with defaults
 * that mean what a version-1 plan meant, so older plans keep their meaning.
 */

/**
 * The optimizer and its hyperparameters. Every kind's arithmetic is TensorFlow.js 4.22's `tf.train.*`
 * (op for op, see agents/exec/optimizer.ts), except where noted; defaults are Keras's. Options added
 * later are optional or defaulted, so earlier plans keep their meaning.
 */
export const OptimizerSchema = z.discriminatedUnion('kind', [
  /**
   * Plain SGD (momentum 0, tf.train.sgd), or with momentum tf.train.momentum(lr, momentum, nesterov):
   * v ← μ·v + g, then θ ← θ − η·v, or with Nesterov θ ← θ − η·(g + μ·v).
   */
  z.object({
    kind: z.literal('sgd'),
    learningRate: z.number().positive(),
    momentum: z.number().min(0).max(1).default(0),
    /** Nesterov's momentum (tf.train.momentum's useNesterov, Keras's nesterov); absent: false. */
    nesterov: z.boolean().optional(),
  }),
  /** tf.train.adam: θ ← θ − η·m̂/(√v̂ + ε). */
  z.object({
    kind: z.literal('adam'),
    learningRate: z.number().positive(),
    beta1: z.number().min(0).max(1).default(0.9),
    beta2: z.number().min(0).max(1).default(0.999),
    epsilon: z.number().positive().default(1e-7),
  }),
  /** Adam with decoupled weight decay (Loshchilov & Hutter; Keras's and PyTorch's AdamW): θ ← θ − η·λ·θ, then Adam's step. */
  z.object({
    kind: z.literal('adamw'),
    learningRate: z.number().positive(),
    beta1: z.number().min(0).max(1).default(0.9),
    beta2: z.number().min(0).max(1).default(0.999),
    epsilon: z.number().positive().default(1e-7),
    /** λ, Keras's default. */
    weightDecay: z.number().min(0).default(0.004),
  }),
  /** tf.train.rmsprop(lr, decay, momentum, epsilon, centered); `decay` is Keras's rho. */
  z.object({
    kind: z.literal('rmsprop'),
    learningRate: z.number().positive(),
    decay: z.number().min(0).max(1).default(0.9),
    momentum: z.number().min(0).max(1).default(0),
    epsilon: z.number().positive().default(1e-7),
    centered: z.boolean().default(false),
  }),
  /** tf.train.adagrad(lr, initialAccumulatorValue), with Keras's epsilon (tfjs's is the backend's, 1e-7 in float32). */
  z.object({
    kind: z.literal('adagrad'),
    learningRate: z.number().positive(),
    initialAccumulatorValue: z.number().min(0).default(0.1),
    epsilon: z.number().positive().default(1e-7),
  }),
]);
export type OptimizerConfig = z.infer<typeof OptimizerSchema>;

export const StageSchema = z.object({
  /** Layer ids of this stage, in graph order. Stages together cover every layer exactly once. */
  layers: z.array(z.string()).min(1).max(LIMITS.layers),
  /** Number of data-parallel replicas that run this stage. */
  dataParallel: z.number().int().min(1).max(LIMITS.devices),
  /**
   * Operator-sharding (tensor-parallel) degree: how many devices hold one replica of this stage, each
   * a shard of the layers named in `sharding`. The stage uses dataParallel × tensorParallel devices.
   */
  tensorParallel: z.number().int().min(1).max(LIMITS.devices).default(1),
  /**
   * Global device indices (ClusterSpec) serving this stage, replica-major: replica r's shards are
   * devices[r·tensorParallel … (r+1)·tensorParallel − 1]. Absent: each rank runs on the device with
   * its own index (see placements).
   */
  devices: z.array(z.number().int().min(0).max(LIMITS.devices - 1)).max(LIMITS.devices).optional(),
});
export type Stage = z.infer<typeof StageSchema>;

/**
 * VirtualFlow's virtual nodes: the global batch is cut into `total` fixed slices, and each
 * data-parallel replica runs its slices one after another, accumulating gradients. Hyperparameters
 * and data order are tied to `total`, not to the hardware, so moving slices between replicas (a
 * faster device taking more, a resize) never changes what is learnt.
 */
export const VirtualNodesSchema = z.object({
  total: z.number().int().min(1).max(LIMITS.virtualNodes),
  /** Slices per data-parallel replica; absent: spread as evenly as possible, earlier replicas first. */
  perReplica: z.array(z.number().int().min(1).max(LIMITS.virtualNodes)).max(LIMITS.devices).optional(),
});
export type VirtualNodes = z.infer<typeof VirtualNodesSchema>;

/**
 * PipeMare's two corrections for the asynchronous schedule (Yang et al., 2019), each switchable:
 * learning-rate rescheduling by each stage's delay, and discrepancy correction of the weights the
 * backward pass uses. The formulas are written beside the code that applies them (agents/schedule/pipemare.ts).
 */
export const PipeMareSchema = z.object({
  lrRescheduling: z.boolean().default(true),
  /** K: optimizer updates over which the delay-scaled step size warms up to the base step size. */
  warmupUpdates: z.number().int().min(0).default(500),
  discrepancyCorrection: z.boolean().default(true),
  /** D in γ = D^(1/τ): how fast the velocity estimate forgets (smaller forgets faster). */
  decay: z.number().gt(0).lt(1).default(0.1),
  /**
   * Micro-batches each stage (but the last) keeps in flight beyond 1F1B's p − s. Without any, every
   * message's latency lands on the stream's critical path (a backward waits for its gradient); one
   * more absorbs it, for one more stashed input per stage and one more update of delay.
   */
  inFlightSlack: z.number().int().min(0).max(8).default(1),
});
export type PipeMareOptions = z.infer<typeof PipeMareSchema>;

export const PlanSchema = z.object({
  version: z.literal(1),
  model: z.string().min(1),
  stages: z.array(StageSchema).min(1).max(LIMITS.stages),
  /** Samples per optimizer step across all replicas; the hyperparameters are tied to it. */
  globalBatch: z.number().int().min(1).max(LIMITS.globalBatch),
  /** Micro-batches each virtual node (by default: each replica) splits its share of the global batch into. */
  microBatches: z.number().int().min(1).max(LIMITS.microBatches),
  schedule: z.enum(['gpipe', '1f1b', 'async']),
  /** ZeRO stage over each stage's data-parallel group: 1 shards optimizer state, 2 also gradients, 3 also parameters. */
  zero: z.number().int().min(0).max(3).default(0),
  /** Recompute activations in the backward pass instead of keeping them from the forward pass. */
  recompute: z.boolean().default(false),
  /** Per-layer operator sharding in SBP terms, by layer id; layers not named are replicated (weight B). */
  sharding: z.record(z.string(), LayerShardingSchema).default({}),
  /** Absent: one virtual node per data-parallel replica. */
  virtualNodes: VirtualNodesSchema.optional(),
  /** Options of the `async` schedule; defaults apply when absent. */
  pipemare: PipeMareSchema.optional(),
  optimizer: OptimizerSchema,
  /**
   * Clip gradients by global norm: when the L2 norm of one step's gradients over the whole model (all
   * stages and shards) exceeds this bound, every gradient is scaled by bound / norm before the
   * optimizer. Absent: no clipping.
   */
  gradientClipNorm: z.number().positive().optional(),
  seed: z.number().int().min(0),
  /**
   * false: every epoch takes the training samples in file order, as Keras's `shuffle=False` does.
   * Absent or true: a seeded permutation per epoch (engine/data/dataOrder.ts).
   */
  shuffle: z.boolean().optional(),
});
export type Plan = z.infer<typeof PlanSchema>;

/** A plan that cannot be read: every problem as a coded diagnostic (plan-too-large, plan-unknown-field, plan-schema). */
export class PlanError extends DiagnosticError {
  constructor(diagnostics: Diagnostic[]) {
    super(diagnostics, 'The plan is malformed:');
    this.name = 'PlanError';
  }
}

/**
 * Parse untrusted plan JSON, throwing a PlanError that lists every problem with its path: sizes first
 * (before the schema allocates per element), then fields the schema does not know (a misspelt optional
 * field would otherwise be dropped without a word), then the schema's own findings.
 */
export function parsePlan(input: unknown): Plan {
  const tooLarge = planSizeProblems(input);
  if (tooLarge.length) throw new PlanError(tooLarge);
  const unknown = unknownFields(PlanSchema, input, LIMITS.findingsKept).map(
    (f): Diagnostic => ({
      severity: 'error',
      code: 'plan-unknown-field',
      message: `Unknown field "${f.key}" at ${f.path}${f.suggestion ? ` (did you mean ${f.suggestion}?)` : ''}.`,
      where: { field: f.path },
      hint: f.suggestion ? `Rename it to ${f.suggestion}.` : 'Remove it, or check its spelling against the plan format in README.md.',
    }),
  );
  const result = PlanSchema.safeParse(input);
  if (result.success && !unknown.length) return result.data;
  const schema = (result.error?.issues ?? []).slice(0, LIMITS.findingsKept).map(
    (issue): Diagnostic => ({
      severity: 'error',
      code: 'plan-schema',
      message: `${issue.path.join('.') || '(plan)'}: ${describeIssue(issue, input)}`,
      where: { field: issue.path.join('.') || '(plan)' },
      hint: 'Correct the value; README.md describes every plan field.',
    }),
  );
  throw new PlanError([...unknown, ...schema]);
}

/** zod says "expected number, received number" of Infinity (JSON's 1e400): say what is wrong. */
function describeIssue(issue: z.core.$ZodIssue, input: unknown): string {
  if (issue.code !== 'invalid_type' || issue.expected !== 'number') return issue.message;
  const value = issue.path.reduce<unknown>((v, k) => (typeof v === 'object' && v !== null ? (v as Record<PropertyKey, unknown>)[k] : undefined), input);
  return typeof value === 'number' ? `${value} is not a finite number (a number written too large, such as 1e400, reads as Infinity)` : issue.message;
}

/** Devices (one agent each) a plan uses: every stage's data-parallel × tensor-parallel degree, summed. */
export function agentsNeeded(plan: Plan): number {
  return plan.stages.reduce((sum, stage) => sum + stage.dataParallel * stage.tensorParallel, 0);
}
