import { existsSync, statSync } from 'node:fs';
import { join, resolve } from 'node:path';
import { pullRun } from '../deploy/pullRun.js';
import type { RunFile } from '../deploy/runFileSources.js';
import type { ConnectOptions } from '../deploy/ssh/connectHost.js';
import { listDeployRecords } from './deployRecord.js';
import { latestCheckpoint } from './runStore.js';

const CHECKPOINT = /^checkpoints\/step-\d+\.ckpt$/;

/** The newest checkpoint among a run folder's files (the names sort by step), alone. */
export function newestCheckpointOnly(files: RunFile[]): RunFile[] {
  const newest = files.filter((f) => CHECKPOINT.test(f.path)).sort((a, b) => a.path.localeCompare(b.path)).at(-1);
  return newest ? [newest] : [];
}

/**
 * Before `shoal export` or `shoal resume` reads a run: when `target` names a deployed job (its id or its
 * local run folder), its newest checkpoint is copied from the head host, where the coordinator wrote
 * it (nothing is copied when it is already here). A head host that cannot be reached is a warning
 * when a checkpoint is here already, and an error naming the host otherwise. Anything else (a
 * checkpoint file, a `shoal train` run) is left alone.
 */
export async function pullNewestCheckpoint(target: string, say: (line: string) => void, options: ConnectOptions = {}): Promise<void> {
  if (existsSync(resolve(target)) && statSync(resolve(target)).isFile()) return;
  const found = listDeployRecords().find((r) => r.record.jobId === target || r.runDir === resolve(target));
  if (!found) return;
  const { record, runDir } = found;
  const [head] = await pullRun(record, runDir, {
    ...options,
    hosts: [record.launcher === 'local' ? 'localhost' : record.head],
    select: newestCheckpointOnly,
    onProgress: (e) => {
      if (e.status === 'ok' || e.status === 'fail') return;
      say(`${e.host}: ${e.detail}`);
    },
  });
  if (head.ok) {
    if (head.copied) say(`copied the newest checkpoint of job ${record.jobId} from ${head.host} into ${join(runDir, 'checkpoints')}`);
    return;
  }
  const here = latestCheckpoint(join(runDir, 'checkpoints'));
  if (!here) throw new Error(`Job ${record.jobId}'s checkpoints are on its head host, which could not be reached: ${head.error}`);
  say(`warning: could not reach the head host for a newer checkpoint (${head.error}); using ${here}, already here.`);
}
