import { existsSync, readFileSync, writeFileSync } from 'node:fs';
import { latestCheckpointIn } from '../../engine/wire/checkpointFolder.js';

/**
 * A deployed job's coordinator runs under the start script's supervisor loop
 * (engine/node/deploy/jobScripts.ts): when it dies by a signal (SIGKILL, the OOM killer) the loop
 * starts it again with SHOAL_RESTART=n (the policy: engine/plan/restartPolicy.ts). The new coordinator
 * listens on the same port — agents and studios find it where they left it — and resumes from the
 * newest checkpoint in its folder.
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
export function resumePointAfterRestart(checkpointDir: string | undefined, configured: string | undefined, warn: (message: string) => void = () => {}): string | undefined {
  if (restartCount() === 0 || !checkpointDir) return configured;
  // A checkpoint the crash left corrupt is skipped (warned about): the newest intact one is used.
  return latestCheckpointIn(checkpointDir, warn) ?? configured;
}
