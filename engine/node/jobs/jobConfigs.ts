import { randomBytes } from 'node:crypto';
import { join } from 'node:path';
import { stepsPerEpoch } from '../../data/dataOrder.js';
import type { ModelGraph } from '../../model/graph.js';
import type { Plan } from '../../plan/plan.js';
import type { AgentConfig, CoordinatorConfig } from '../../protocol/processConfig.js';
import type { SyntheticStageMs } from '../../protocol/syntheticStage.js';
import { sampleCounts, type TrainingSetup } from '../../protocol/trainingSetup.js';

/**
 * The one place that says what a job's processes are told: the coordinator's and the agents'
 * configurations, whichever launcher starts them (a child of `shoal train`, a detached local process,
 * an SSH host) and whenever (deploy, a restart after a crash, a resize). Their types are the schemas
 * the processes check them with (engine/protocol/processConfig.ts). Both carry the job secret, so
 * they travel on standard input or in a mode-600 file only (see launcher.ts).
 */

/** Knobs benchmarks and tests turn; a job from the studio or the CLI leaves them at their defaults. */
export interface CoordinatorTuning {
  /** Benchmarks only: stages sleep (or spin) this long per micro-batch instead of computing. */
  syntheticStageMs?: SyntheticStageMs;
  /** Re-balance virtual nodes between replicas by measured speed (default true). */
  rebalance?: boolean;
  /** Start each gradient bucket's all-reduce during the last backward pass (default true). */
  overlapGradients?: boolean;
  /** Profile layers and links before the first step (default true). */
  profile?: boolean;
  profileBatches?: number[];
  profileRepeats?: number;
  profileFull?: boolean;
  /** Emit the measured timeline of every this many steps (default 10; 0 = never). */
  timelineEverySteps?: number;
  /** Fence an agent silent this long (default HEARTBEAT_TIMEOUT_SEC, engine/plan/runtimeConstants.ts). */
  heartbeatTimeoutSec?: number;
}

/** The tuning knobs of a larger set of options (LocalJob's), and nothing else. */
export function tuningOf({ syntheticStageMs, rebalance, overlapGradients, profile, profileBatches, profileRepeats, profileFull, timelineEverySteps, heartbeatTimeoutSec }: CoordinatorTuning): CoordinatorTuning {
  return { syntheticStageMs, rebalance, overlapGradients, profile, profileBatches, profileRepeats, profileFull, timelineEverySteps, heartbeatTimeoutSec };
}

/** What a job trains, for how long, and from where: the part of its coordinator's config that does not depend on where it runs. */
export interface JobSpec {
  jobId: string;
  model: ModelGraph;
  plan: Plan;
  training?: TrainingSetup;
  agents: number;
  steps: number;
  evalEverySteps: number;
  checkpointEverySteps?: number;
  resumeFrom?: string;
  tuning?: CoordinatorTuning;
  /** Stop with a checkpoint by then (ms since the epoch): before a Slurm allocation's time limit. */
  stopBy?: number;
}

/** Where the coordinator runs: its run folder (absolute; '' when it is the process's working directory, as on a host) and the address it listens on. */
export interface CoordinatorPlace {
  runDir: string;
  listenHost?: string;
}

export function newJobId(): string {
  return `job-${new Date().toISOString().replace(/[-:T]/g, '').slice(0, 14)}-${randomBytes(3).toString('hex')}`;
}

export function newJobSecret(): string {
  return randomBytes(32).toString('hex');
}

/** Evaluate once per epoch unless told otherwise. */
export function defaultEvalEvery(plan: Plan, training?: TrainingSetup): number {
  return stepsPerEpoch(sampleCounts(training).trainSamples, plan.globalBatch);
}

export function coordinatorConfig(spec: JobSpec, secret: string, place: CoordinatorPlace): CoordinatorConfig {
  const file = (name: string) => (place.runDir ? join(place.runDir, name) : name);
  const tuning = spec.tuning ?? {};
  return {
    secret,
    jobId: spec.jobId,
    plan: spec.plan,
    model: spec.model,
    ...(spec.training ? { training: spec.training } : {}),
    agents: spec.agents,
    steps: spec.steps,
    evalEverySteps: spec.evalEverySteps,
    checkpointDir: file('checkpoints'),
    checkpointEverySteps: spec.checkpointEverySteps,
    resumeFrom: spec.resumeFrom,
    ...(spec.stopBy ? { stopBy: spec.stopBy } : {}),
    ...tuning,
    profilePath: file('profile.json'),
    // The job's history outlives the coordinator: attach, the Runs view and restarts read it.
    eventLogPath: file('events.jsonl'),
    ...(place.listenHost ? { listenHost: place.listenHost } : {}),
  };
}

/** The rank an agent is started for and the GPU it is pinned to (agentPlacement.ts). */
export type AgentPlace = Pick<AgentConfig, 'slot' | 'gpu'>;

/** An agent joins `coordinator` (as its host reaches it) and takes peer connections on `bindHost`. */
export function agentConfig(secret: string, coordinator: { host: string; port: number }, bindHost: string, hostLabel: string, slowdown?: number, place?: AgentPlace): AgentConfig {
  return { secret, coordinator: { host: coordinator.host, port: coordinator.port }, bindHost, hostLabel, ...(slowdown === undefined ? {} : { slowdown }), ...place };
}
