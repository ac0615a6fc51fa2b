import type { JobEvent } from '../../engine/protocol/events.js';

/**
 * When the job's training began and at which step, from the history a restarted coordinator continues
 * (restart.ts): its first `running` status and first step. The elapsed time of later steps and the final
 * throughput count from there, so a restart does not reset them (a 58 s job read 25.3 s). Null for a
 * coordinator that starts the history (no earlier run to count from).
 */
export function runClockFrom(history: readonly JobEvent[]): { startedAt: number; firstStep: number } | null {
  const running = history.find((e) => e.type === 'status' && e.state === 'running');
  const firstStep = history.find((e) => e.type === 'step');
  if (running?.type !== 'status' || firstStep?.type !== 'step') return null;
  return { startedAt: running.time, firstStep: firstStep.step };
}
