import { existsSync, readFileSync, writeFileSync } from 'node:fs';
import type { ModelGraph } from '../../engine/model/graph.js';
import { replan } from '../../engine/plan/elastic.js';
import type { Plan } from '../../engine/plan/plan.js';
import type { JobEvent } from '../../engine/protocol/events.js';
import { latestCheckpointIn } from '../../engine/wire/checkpointFolder.js';

/**
 * A deployed job's coordinator runs under the start script's supervisor loop
 * (engine/node/deploy/jobScripts.ts): when it dies by a signal (SIGKILL, the OOM killer) the loop
 * starts it again with SHOAL_RESTART=n. The new coordinator listens on the same port — agents and
 * studios find it where they left it — and resumes from the newest checkpoint in its folder.
 */
export const restartCount = (): number => Number(process.env.SHOAL_RESTART ?? 0) || 0;

/** Where the first coordinator wrote its port, in the run folder (its working directory). */
const PORT_FILE = 'coordinator.port';

export function rememberedPort(): number {
  if (restartCount() === 0 || !existsSync(PORT_FILE)) return 0;
  return Number(readFileSync(PORT_FILE, 'utf8').trim()) || 0;
}

export function rememberPort(port: number): void {
  if (process.env.SHOAL_SUPERVISED === '1') writeFileSync(PORT_FILE, `${port}\n`, { mode: 0o600 });
}

/** The checkpoint a restarted coordinator continues from (the configured one when none was written yet). */
export function resumePointAfterRestart(checkpointDir: string | undefined, configured: string | undefined): string | undefined {
  if (restartCount() === 0 || !checkpointDir) return configured;
  return latestCheckpointIn(checkpointDir) ?? configured;
}

/**
 * What a restarted coordinator starts with: as many agents as the job's last generation had (its
 * history says; a resize may have changed them, and they all rejoin), under the plan re-planned for
 * that many, as a resize would. Null when that is the configured count and plan.
 */
export function teamAfterRestart(plan: Plan, model: ModelGraph, configuredAgents: number, history: readonly JobEvent[]): { plan: Plan; agents: number } | null {
  const last = [...history].reverse().find((e) => e.type === 'membership');
  if (last?.type !== 'membership' || last.agents.length === configuredAgents) return null;
  return { plan: replan(plan, model, last.agents.length), agents: last.agents.length };
}
