import { latestCheckpointIn } from '../../wire/checkpointFolder.js';
import { makeFolders } from '../../wire/fileErrors.js';
import { existsSync, renameSync, statSync, writeFileSync } from 'node:fs';
import { homedir } from 'node:os';
import { basename, join, resolve } from 'node:path';
import { readRunRecord, RUN_RECORD_VERSION, type RunRecord } from './runRecord.js';
import { datasetRecordOf } from './datasetRecord.js';
import { acquireRunLock } from './runLock.js';
import { assertRunFolderUsable, clearEarlierRun, type RunFolderUse } from './runFolderGuard.js';

/**
 * Where runs live on disk: one folder per job with `job.json` (what was asked) and `checkpoints/`.
 * SHOAL_DATA_DIR overrides the location (tests, shared disks); otherwise the XDG data directory.
 */
export function runsRoot(): string {
  if (process.env.SHOAL_DATA_DIR) return resolve(process.env.SHOAL_DATA_DIR, 'runs');
  const data = process.env.XDG_DATA_HOME ?? join(homedir(), '.local', 'share');
  return join(data, 'shoal', 'runs');
}

/**
 * Create a run folder (or reuse the resumed run's, or overwrite an earlier one's when told: see
 * runFolderGuard.ts) and take its lock (runLock.ts) before anything in it is written: a second job on
 * the same folder is refused here, naming the first. The caller releases the lock (releaseRunLock)
 * when its job ends; `warn` hears about a stale lock taken over.
 */
export function createRunDir(record: RunRecord, dir = join(runsRoot(), record.jobId), warn?: (message: string) => void, use: RunFolderUse = {}): string {
  assertRunFolderUsable(dir, use);
  makeFolders(join(dir, 'checkpoints'), 'The run folder (--out)');
  acquireRunLock(dir, warn);
  if (use.overwrite && !use.resuming) clearEarlierRun(dir);
  // A resumed run keeps the record it had; a new one fingerprints its data once, here.
  if (!record.dataset) record = { ...record, dataset: datasetRecordOf(record.training) };
  const tmp = join(dir, '.job.json.tmp');
  writeFileSync(tmp, JSON.stringify({ version: RUN_RECORD_VERSION, ...record }, null, 2) + '\n', { mode: 0o600 });
  renameSync(tmp, join(dir, 'job.json'));
  return dir;
}

/** The newest intact checkpoint in a folder of `step-NNNNNNN.ckpt` files, or undefined; `warn` hears of corrupt ones skipped. */
export function latestCheckpoint(dir: string, warn?: (message: string) => void): string | undefined {
  return latestCheckpointIn(dir, warn) ?? undefined;
}

/**
 * Resolve what `shoal resume` was given — a run id, a run folder, or a checkpoint file — to the
 * checkpoint to load and the run's record. Errors say what was looked for and where.
 */
export function findResumePoint(
  target: string,
  warn: (message: string) => void = (m) => process.stderr.write(`shoal: warning: ${m}\n`),
): { checkpoint: string; record?: RunRecord; runDir?: string } {
  const candidates = [resolve(target), join(runsRoot(), target)];
  for (const path of candidates) {
    if (!existsSync(path)) continue;
    if (statSync(path).isFile()) return { checkpoint: path };
    const checkpoint = latestCheckpoint(join(path, 'checkpoints'), warn) ?? latestCheckpoint(path, warn);
    if (!checkpoint) throw new Error(`Run folder ${path} has no checkpoint yet (looked for intact step-*.ckpt files in ${join(path, 'checkpoints')}).`);
    const record = existsSync(join(path, 'job.json')) ? readRunRecord(path) : undefined;
    return { checkpoint, record, runDir: path };
  }
  throw new Error(`No run or checkpoint "${basename(target)}": looked at ${candidates.join(' and ')}. List runs with \`ls ${runsRoot()}\`.`);
}
