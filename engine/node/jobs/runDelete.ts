import { existsSync, mkdirSync, renameSync, rmSync } from 'node:fs';
import { dirname, join } from 'node:path';
import type { RunDeletion } from '../../protocol/runs.js';
import { syncFolder } from '../../wire/durableFiles.js';
import { RUN_LOCK, RunFolderBusyError, acquireRunLock, releaseRunLock } from './runLock.js';
import { runFolder } from './runHistory.js';
import { runsRoot } from './runStore.js';

/** Shoal's trash for runs: beside the runs folder, so that a move there is a rename on the same disk. */
export function runsTrash(root = runsRoot()): string {
  return join(dirname(root), 'trash', 'runs');
}

/**
 * Delete run `id`: its folder is moved into Shoal's trash (`<data>/trash/runs/<id>`, a suffix when that
 * is taken) or, `permanently`, removed. A run a job still owns is refused, naming the job: the run lock
 * is taken first (runLock.ts), so a job cannot start on the folder while it goes, and a running one —
 * in this studio, in a terminal, or on another host — keeps its folder. `running` says the studio
 * itself knows the job to be running (a deployed job whose coordinator holds no lock here).
 */
export function deleteRun(id: string, options: { permanently?: boolean; running?: boolean } = {}, root = runsRoot()): RunDeletion {
  const dir = runFolder(id, root);
  if (options.running) throw new Error(`Run ${id} is still running: stop it before deleting it.`);
  try {
    acquireRunLock(dir);
  } catch (err) {
    if (err instanceof RunFolderBusyError) {
      throw new Error(`Run ${id} is still running (pid ${err.owner.pid} on ${err.owner.host}, since ${err.owner.since}): stop it before deleting it. If no such job runs any more, delete ${join(dir, RUN_LOCK)}.`);
    }
    throw err;
  }
  try {
    if (options.permanently) {
      rmSync(dir, { recursive: true, force: true });
      syncFolder(root);
      return { id };
    }
    const trash = runsTrash(root);
    mkdirSync(trash, { recursive: true, mode: 0o700 });
    let target = join(trash, id);
    for (let n = 2; existsSync(target); n++) target = join(trash, `${id}.${n}`);
    renameSync(dir, target);
    // The lock went with the folder: the trashed run is nobody's.
    rmSync(join(target, RUN_LOCK), { force: true });
    syncFolder(root);
    syncFolder(trash);
    return { id, trashedTo: target };
  } finally {
    releaseRunLock(dir);
  }
}
