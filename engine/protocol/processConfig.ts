import { z } from 'zod';
import type { ModelGraph } from '../model/graph.js';
import { TrainingSetupSchema } from './trainingSetup.js';
import { SyntheticStageMsSchema } from './syntheticStage.js';

/**
 * What Shoal's processes are told when they start (one JSON line on standard input: it carries the job
 * secret). The studio and the CLI write these (engine/node); the coordinator and the agents read them
 * through these schemas, so a config from another Shoal version fails with the field it lacks.
 */

/**
 * A model graph as the studio built it. Checked shallowly: it comes from the same studio that checked
 * the plan against it, and its layers' facts are many and only read by the code that made them.
 */
export const ModelGraphSchema = z.custom<ModelGraph>(
  (v) => typeof v === 'object' && v !== null && typeof (v as ModelGraph).name === 'string' && Array.isArray((v as ModelGraph).layers) && Array.isArray((v as ModelGraph).outputs),
  { message: 'expected a model graph (name, layers, outputs)' },
);

/** The coordinator of a training job. */
export const CoordinatorConfigSchema = z.object({
  secret: z.string().min(1),
  jobId: z.string(),
  /** Checked by parsePlan, which explains a bad plan with coded diagnostics. */
  plan: z.unknown(),
  model: ModelGraphSchema,
  /** What the agents train on and minimise; absent: the built-in models' MNIST digits and cross-entropy. */
  training: TrainingSetupSchema.optional(),
  /** Agents expected to join; ranks beyond the plan's needs stay idle. */
  agents: z.number().int().min(1),
  steps: z.number().int().min(0),
  /** Evaluate on the test set every this many steps (and always at the end). */
  evalEverySteps: z.number().int().min(1),
  /** Folder for checkpoints (step-NNNNNN.ckpt); the last step is always saved there. None when absent. */
  checkpointDir: z.string().optional(),
  /** Also save a checkpoint every this many steps. */
  checkpointEverySteps: z.number().int().min(1).optional(),
  /** A checkpoint to resume from: parameters, optimizer state and the step to continue at. */
  resumeFrom: z.string().optional(),
  /**
   * Stop with a checkpoint at the first step boundary after this time (ms since the epoch): a Slurm
   * job's allocation ends at its time limit, and a checkpoint taken before is what `shoal resume` continues.
   */
  stopBy: z.number().int().positive().optional(),
  /** Seconds without a heartbeat after which an agent counts as lost (default HEARTBEAT_TIMEOUT_SEC, engine/plan/runtimeConstants.ts). */
  heartbeatTimeoutSec: z.number().positive().optional(),
  /** Seconds a step, evaluation or setup may take before the job fails naming the ranks it waits for. */
  roundTimeoutSec: z.number().positive().optional(),
  /** Benchmarks only: every stage takes this long per micro-batch instead of computing (agents/exec/syntheticStage.ts). */
  syntheticStageMs: SyntheticStageMsSchema.optional(),
  /** Re-balance virtual nodes between replicas by their measured speed (default true). */
  rebalance: z.boolean().optional(),
  /** Overlap gradient all-reduce with the last backward pass (default true). */
  overlapGradients: z.boolean().optional(),
  /** Profile layers and links at the start (default true); written here as JSON when given (profile.json). */
  profile: z.boolean().optional(),
  profilePath: z.string().optional(),
  /** Batch sizes the layers are timed at (default: around the plan's micro-batch). */
  profileBatches: z.array(z.number().int().min(1)).optional(),
  /** Timed repetitions per layer and batch size after a warm-up (default 3); the median is kept. */
  profileRepeats: z.number().int().min(1).optional(),
  /** Calibration-grade profile: every agent times the whole model, alone and all at once, and all-reduces at several sizes. */
  profileFull: z.boolean().optional(),
  /** Record and emit the measured timeline of every this many synchronous steps (default 10; 0 = never). */
  timelineEverySteps: z.number().int().min(0).optional(),
  /**
   * Address to listen on (default 127.0.0.1). A job with agents on other hosts passes the head host's
   * cluster address so they can join; every connection is still HMAC-authenticated.
   */
  listenHost: z.string().optional(),
  /** Append every event to this file (JSON lines), so the history survives the coordinator (shoal attach). */
  eventLogPath: z.string().optional(),
});
export type CoordinatorConfig = z.infer<typeof CoordinatorConfigSchema>;

/**
 * The coordinator of a link survey (`shoal cluster test`): no training, only one agent per host
 * joining, linking up with every other, and probing each link once.
 */
export const LinkSurveyConfigSchema = z.object({
  mode: z.literal('survey'),
  secret: z.string().min(1),
  jobId: z.string(),
  /** Agents expected: one per surveyed host. */
  agents: z.number().int().min(1),
  /**
   * A small model the agents set up a data-parallel stage of: a single stage replicated on every
   * agent makes each agent a peer of every other (one data-parallel group), so the existing set-up and
   * link probe cover every pair of hosts without a protocol of their own.
   */
  model: ModelGraphSchema,
  listenHost: z.string().optional(),
  /** Seconds for the agents to join and for each round (default 120). */
  roundTimeoutSec: z.number().positive().optional(),
  /** Where the result is written as JSON (relative to the run folder, the process's cwd). */
  resultPath: z.string().optional(),
});
export type LinkSurveyConfig = z.infer<typeof LinkSurveyConfigSchema>;

/** Whatever a coordinator process is started with: a survey says so (`mode`), a training job does not. */
export const CoordinatorProcessConfigSchema = z.union([LinkSurveyConfigSchema, CoordinatorConfigSchema.extend({ mode: z.literal('train').optional() })]);
export type CoordinatorProcessConfig = z.infer<typeof CoordinatorProcessConfigSchema>;

/** An agent: one process per device. */
export const AgentConfigSchema = z.object({
  secret: z.string().min(1),
  coordinator: z.object({ host: z.string(), port: z.number().int().min(1).max(65535) }),
  /** Address peers use to reach this agent. */
  bindHost: z.string(),
  hostLabel: z.string().optional(),
  /**
   * Benchmarks and tests of heterogeneous clusters: behave like a device this many times slower —
   * every forward and backward pass is followed by a sleep of (slowdown − 1) × its duration.
   */
  slowdown: z.number().min(1).optional(),
  /** The rank the plan places on this agent's device; the coordinator's first generation gives it that rank. */
  slot: z.number().int().min(0).optional(),
  /** The GPU it is pinned to (CUDA_VISIBLE_DEVICES), as the host's preflight listed it. */
  gpu: z.object({ index: z.number().int().min(0), name: z.string(), memoryBytes: z.number(), uuid: z.string(), driver: z.string() }).optional(),
});
export type AgentConfig = z.infer<typeof AgentConfigSchema>;
