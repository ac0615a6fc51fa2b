import { DataRefSchema } from './trainingSetup.js';
import { z } from 'zod';
import { PlanSchema } from '../plan/plan.js';
import { ClusterNameSchema, TrustPromptSchema } from './clusters.js';

/**
 * The studio's one-click deploy over the API: a job started detached on a stored SSH cluster (or on
 * this machine), its per-host preparation read by polling — it may stop to ask the user to trust an
 * unknown host key — and the deployed jobs this machine remembers (deploy.json), to re-attach to after
 * a restart. The job's events then flow like a local job's (onJobEvent, jobEvents).
 */
export const DeployTargetSchema = z.discriminatedUnion('kind', [
  /** This machine, with detached processes: the job outlives the studio like a remote one. */
  z.object({ kind: z.literal('local') }),
  z.object({ kind: z.literal('cluster'), cluster: ClusterNameSchema }),
]);
export type DeployTarget = z.infer<typeof DeployTargetSchema>;

export const DeployRequestSchema = z.object({
  plan: PlanSchema,
  target: DeployTargetSchema,
  /** Either epochs over the training samples or an exact number of steps (default 5 epochs). */
  epochs: z.number().positive().max(1000).optional(),
  steps: z.number().int().positive().max(10_000_000).optional(),
  /** Evaluate on the test set every this many steps (default: every epoch). */
  evalEverySteps: z.number().int().positive().optional(),
  /** Do not install the native GPU backend on GPU hosts (agents use wasm). */
  noGpu: z.boolean().optional(),
  /** Hosts whose GPUs tfjs-node-gpu cannot use train on their CPU instead of being refused. */
  allowCpuFallback: z.boolean().optional(),
  /** What to train on (absent: the bundled digits); a NumPy folder on this machine travels with the job. */
  data: DataRefSchema.optional(),
  /** A loss name for every output (absent: the model file's, else inferred). */
  loss: z.string().optional(),
});
export type DeployRequest = z.infer<typeof DeployRequestSchema>;

/** Job ids as deployJob makes them; also keeps a renderer's id out of paths it must not reach. */
export const DeployedJobIdSchema = z.string().regex(/^job-[0-9]{14}-[0-9a-f]{6}$/, 'a job id looks like job-20260101120000-a1b2c3');

export const DeployTrustAnswerSchema = z.object({ jobId: DeployedJobIdSchema, promptId: z.string().regex(/^trust-\d+$/), trust: z.boolean() });
export type DeployTrustAnswer = z.infer<typeof DeployTrustAnswerSchema>;

/** `queue`: a Slurm allocation waiting in the queue (its host row is `slurm`). */
export const DeployStepNameSchema = z.enum(['queue', 'connect', 'setup', 'upload', 'gpu-runtime', 'ready']);
export type DeployStepName = z.infer<typeof DeployStepNameSchema>;

export const DeployStepViewSchema = z.object({
  step: DeployStepNameSchema,
  /** `progress` is a step still running with news (bytes uploaded, npm output). */
  status: z.enum(['running', 'progress', 'ok', 'skipped', 'fail']),
  detail: z.string(),
  /** The step's progress lines so far (upload bytes, npm output), the newest last; at most 20. */
  progress: z.array(z.string()).optional(),
});
export type DeployStepView = z.infer<typeof DeployStepViewSchema>;

export const DeployHostViewSchema = z.object({
  host: z.string(),
  /** Each step's latest state, in the order the steps started. */
  steps: z.array(DeployStepViewSchema),
  /** Set when the host is done: ready, or not (then `error` says what failed and what to do). */
  ok: z.boolean().optional(),
  error: z.string().optional(),
});
export type DeployHostView = z.infer<typeof DeployHostViewSchema>;

export const DeployStatusSchema = z.object({
  jobId: z.string(),
  /** The stored cluster's name, or `local`. */
  cluster: z.string(),
  /**
   * preparing: hosts are being connected, probed and given the agent; starting: processes start;
   * attaching: reaching the coordinator (after a restart); following: events flow to the Monitor;
   * failed: see `error`; detached: the studio no longer follows it (the job itself may go on).
   */
  phase: z.enum(['preparing', 'starting', 'attaching', 'following', 'failed', 'detached']),
  hosts: z.array(DeployHostViewSchema),
  /** Unknown host keys waiting for the user (answer with answerDeployHostKey). */
  trust: z.array(TrustPromptSchema),
  error: z.string().optional(),
});
export type DeployStatus = z.infer<typeof DeployStatusSchema>;

/** A deployed job found in the run folders, its state asked of its hosts. */
export const DeployedJobSummarySchema = z.object({
  jobId: z.string(),
  cluster: z.string(),
  model: z.string(),
  createdAt: z.string(),
  state: z.enum(['running', 'finished', 'failed', 'stopped', 'unknown']),
  detail: z.string(),
  /** A running job's agents as its newest generation counts them (absent when not known). */
  agents: z.object({ training: z.number(), waiting: z.number(), lost: z.number() }).optional(),
  /** A Slurm job's allocation and its state as squeue says it (`ended` once Slurm no longer lists it). */
  slurm: z.object({ allocation: z.string(), state: z.string() }).optional(),
  /** This studio follows it now (its events reach the Monitor). */
  attached: z.boolean(),
});
export type DeployedJobSummary = z.infer<typeof DeployedJobSummarySchema>;
