import type { ModelGraph } from '../model/graph.js';
import type { JobEvent } from '../protocol/events.js';
import { replanTeam } from './teamPlan.js';
import type { Plan } from './plan.js';

/**
 * The one restart policy of a job, whoever supervises its processes: a SupervisedProcess for a job
 * whose processes are children of `shoal train` or the studio (engine/node/deploy/supervisedProcess.ts),
 * or the supervisor loop of a detached process on a host (in sh, generated from these values by
 * engine/node/deploy/jobScripts.ts). Both tell the process it is supervised (SHOAL_SUPERVISED=1) and
 * how often it was restarted (SHOAL_RESTART=n).
 *
 * - A coordinator that dies by a signal (SIGKILL, the OOM killer) while the job runs is started again
 *   on the same port, resumes from the newest checkpoint and continues with the team its history
 *   names. One that exits by itself has reported how the job ended (or failed with an error) and is
 *   not retried.
 * - An agent that lost its coordinator exits with REJOIN_EXIT_CODE and is started again, to rejoin
 *   the restarted one.
 * - At most MAX_RESTARTS times per process.
 */
export const MAX_RESTARTS = 3;

/** An agent that lost its coordinator exits with this code to be started again by its supervisor. */
export const REJOIN_EXIT_CODE = 75;

/** sh reports a process killed by signal n as exit status 128 + n. */
export const SIGNALLED_EXIT_ABOVE = 128;

/** Whether a process that exited so (code, or null when a signal killed it) is started again. */
export function restartsAfterExit(role: 'coordinator' | 'agent', code: number | null, restartsSoFar: number, max = MAX_RESTARTS): boolean {
  if (restartsSoFar >= max) return false;
  if (role === 'agent') return code === REJOIN_EXIT_CODE;
  return code === null || code > SIGNALLED_EXIT_ABOVE;
}

/**
 * What a restarted coordinator starts with: as many agents as the job's last generation had (its
 * history says; a resize may have changed them, and they all rejoin), under the plan re-planned for
 * that many, as a resize would. Null when that is the configured count and plan.
 */
export function teamAfterRestart(plan: Plan, model: ModelGraph, configuredAgents: number, history: readonly JobEvent[]): { plan: Plan; agents: number } | null {
  const last = [...history].reverse().find((e) => e.type === 'membership');
  if (last?.type !== 'membership' || last.agents.length === configuredAgents) return null;
  return { plan: replanTeam(plan, model, last.agents.length), agents: last.agents.length };
}
