import { existsSync, readdirSync } from 'node:fs';
import { join } from 'node:path';

/**
 * How a job's checkpoint folder names its files (`step-0000042.ckpt`): the coordinator writes them,
 * and the studio finds a run's newest one to resume or export from the same rule.
 */
export const checkpointName = (step: number) => `step-${String(step).padStart(7, '0')}.ckpt`;

const CHECKPOINT_FILE = /^step-\d+\.ckpt$/;

/** The checkpoint files in a folder, oldest first (the zero-padded step sorts as text). */
export function checkpointFilesIn(dir: string): string[] {
  if (!existsSync(dir)) return [];
  return readdirSync(dir).filter((f) => CHECKPOINT_FILE.test(f)).sort();
}

/** The newest checkpoint in a folder, or null when there is none (or no folder). */
export function latestCheckpointIn(dir: string): string | null {
  const files = checkpointFilesIn(dir);
  return files.length ? join(dir, files[files.length - 1]) : null;
}
