import { existsSync, readdirSync } from 'node:fs';
import { join } from 'node:path';
import { verifyCheckpoint } from './checkpointFile.js';

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

/**
 * The newest intact checkpoint in a folder, or null when there is none (or no folder). A newer file
 * that fails its integrity check (magic, lengths, SHA-256: a crash mid-copy, a bad disk) is skipped,
 * and `warn` hears which and why, so a restart or resume goes on from the newest good one.
 */
export function latestCheckpointIn(dir: string, warn: (message: string) => void = () => {}): string | null {
  const files = checkpointFilesIn(dir);
  for (let i = files.length - 1; i >= 0; i--) {
    const file = join(dir, files[i]);
    const problem = verifyCheckpoint(file);
    if (!problem) return file;
    warn(`Skipping checkpoint ${file}: ${problem}.${i > 0 ? ' Trying the one before it.' : ' No older checkpoint is left in that folder.'}`);
  }
  return null;
}
