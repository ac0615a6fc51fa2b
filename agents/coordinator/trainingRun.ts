import type { Plan } from '../../engine/plan/plan.js';
import type { CoordinatorConfig } from '../../engine/protocol/processConfig.js';
import type { EventLog } from './eventLog.js';
import type { Generation } from './generation.js';
import type { Member, Membership } from './membership.js';

/**
 * What the parts of the training loop share: the job they run (from coordinator.ts) and the few
 * facts derived from it. Types live here, apart from the code that uses them, so that the
 * coordinator, the loop and the measurement rounds import one another in one direction only.
 */

/** A change of membership asked for while the job runs (`shoal resize`, the studio). */
export interface ResizeRequest {
  /** Agents expected to join (they connect on their own); the resize waits for them. */
  add: number;
  /** Ranks of the current generation to release. */
  remove: number[];
  /** When the training loop first saw it (for its timeout). */
  since?: number;
  /** How many agents had joined the job when it was accepted: those joining after it are its own. */
  joinedBefore?: number;
  /** Named in the membership event that applies it, so the requester can tell it is done. */
  id?: string;
}

export interface JobContext {
  config: CoordinatorConfig;
  /** The plan the user chose; later generations keep its stages, batch and virtual nodes. */
  plan: Plan;
  /** The first generation's plan when it is not `plan`: a restarted coordinator's, re-planned for the agents the job had. */
  startPlan?: Plan;
  membership: Membership;
  log: EventLog;
  /** Resize requests not yet applied, oldest first; the loop applies them at step boundaries. */
  resizes: ResizeRequest[];
  /** Set by a controller's checkpointAndStop: the loop saves a checkpoint at the next step boundary and ends the job. */
  stop?: { requested: boolean };
}

/** What the measurement rounds (measurements.ts) need of the running generation. */
export interface TrainingContext {
  plan: Plan;
  config: CoordinatorConfig;
  active: Member[];
  log: EventLog;
  /** Ask every active agent and wait for each one's reply. */
  ask: Generation['ask'];
}

/** The job and what every part of its training loop derives from it alike. */
export interface TrainingRun {
  job: JobContext;
  config: CoordinatorConfig;
  log: EventLog;
  /** How checkpoints name the model: a built-in model's name, or the model file a user's came from. */
  modelName: string;
  /** Seconds a round (step, set-up, evaluation) or a resize's newcomers may take. */
  timeoutSec: number;
  /** A coordinator's log line; `requestId` names the resize it answers (a refusal, which the requester waits for). */
  say: (level: 'info' | 'warn' | 'error', message: string, requestId?: string) => void;
}

export const now = () => Date.now();

export function trainingRun(job: JobContext): TrainingRun {
  const { config, log } = job;
  return {
    job,
    config,
    log,
    modelName: config.model.source?.modelFile ?? config.model.name,
    timeoutSec: config.roundTimeoutSec ?? 300,
    say: (level, message, requestId) => log.emit({ type: 'log', level, host: 'coordinator', rank: null, message, time: now(), ...(requestId ? { requestId } : {}) }),
  };
}
