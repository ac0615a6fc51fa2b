import { closeSync, openSync, readFileSync, rmSync, writeSync } from 'node:fs';
import { hostname } from 'node:os';
import { join, resolve } from 'node:path';
import { processAlive } from './processAlive.js';

/**
 * A run folder belongs to one job at a time: `run.lock` in it names the owner (pid, host, since). It
 * is created with O_EXCL, so of two jobs started on the same `--out` exactly one gets it; the other is
 * refused with the owner's name. A lock whose owner is gone (same host, pid not alive) is stale and
 * taken over with a warning; one from another host cannot be checked from here and is never taken.
 * Locks this process holds are removed when the job releases them, and at the latest when it exits.
 */
export const RUN_LOCK = 'run.lock';

export interface RunLockOwner {
  pid: number;
  host: string;
  /** ISO time the lock was taken. */
  since: string;
}

/** Folders whose lock this process holds (removed on exit, whatever way it exits). */
const held = new Set<string>();
let exitHookInstalled = false;

export class RunFolderBusyError extends Error {
  constructor(
    readonly dir: string,
    readonly owner: RunLockOwner,
  ) {
    super(
      `Run folder ${dir} is in use by another job (pid ${owner.pid} on ${owner.host}, since ${owner.since}). ` +
        `Wait for that job to end or stop it, or choose another run folder (--out). ` +
        `If no such job runs any more, delete ${join(dir, RUN_LOCK)}.`,
    );
    this.name = 'RunFolderBusyError';
  }
}

function readOwner(file: string): RunLockOwner | null {
  try {
    const parsed = JSON.parse(readFileSync(file, 'utf8')) as Partial<RunLockOwner>;
    if (typeof parsed.pid !== 'number' || typeof parsed.host !== 'string') return null;
    return { pid: parsed.pid, host: parsed.host, since: String(parsed.since ?? 'an unknown time') };
  } catch {
    return null;
  }
}

/** A lock's owner may still run: on another host (which cannot be checked from here), or alive here. */
function mayBeRunning(owner: RunLockOwner): boolean {
  return owner.host !== hostname() || processAlive(owner.pid);
}

/** Throws RunFolderBusyError when a job (this process's included) holds the lock of `dir`. */
export function assertRunFolderNotBusy(folder: string): void {
  const dir = resolve(folder);
  const owner = readOwner(join(dir, RUN_LOCK));
  if (owner && (held.has(dir) || mayBeRunning(owner))) throw new RunFolderBusyError(dir, owner);
}

/**
 * Take the lock of run folder `dir` (which must exist) for this process. Throws RunFolderBusyError
 * when a live job holds it; `warn` hears about a stale lock taken over.
 */
export function acquireRunLock(folder: string, warn: (message: string) => void = () => {}): void {
  const dir = resolve(folder);
  const file = join(dir, RUN_LOCK);
  const me: RunLockOwner = { pid: process.pid, host: hostname(), since: new Date().toISOString() };
  for (let attempt = 0; attempt < 3; attempt++) {
    let fd: number;
    try {
      fd = openSync(file, 'wx', 0o644);
    } catch (err) {
      if ((err as NodeJS.ErrnoException).code !== 'EEXIST') throw new Error(`Cannot lock run folder ${dir}: ${(err as Error).message}.`);
      const owner = readOwner(file);
      // Half-written by an owner that is creating it right now: look again.
      if (!owner) {
        if (attempt < 2) continue;
        throw new Error(`Run folder ${dir} has a lock file ${file} that is not one Shoal wrote; delete it if no job runs there.`);
      }
      if (held.has(dir) || mayBeRunning(owner)) throw new RunFolderBusyError(dir, owner);
      warn(`Run folder ${dir} was locked by pid ${owner.pid} on ${owner.host} (since ${owner.since}), which is no longer running; taking it over.`);
      rmSync(file, { force: true });
      continue;
    }
    try {
      writeSync(fd, JSON.stringify(me) + '\n');
    } finally {
      closeSync(fd);
    }
    held.add(dir);
    if (!exitHookInstalled) {
      exitHookInstalled = true;
      process.on('exit', () => {
        for (const d of held) rmSync(join(d, RUN_LOCK), { force: true });
      });
    }
    return;
  }
  throw new Error(`Could not lock run folder ${dir}: another job keeps taking it.`);
}

/** Give up this process's lock on `dir` (a no-op when it holds none). */
export function releaseRunLock(folder: string): void {
  const dir = resolve(folder);
  if (!held.delete(dir)) return;
  const owner = readOwner(join(dir, RUN_LOCK));
  if (owner && owner.pid === process.pid) rmSync(join(dir, RUN_LOCK), { force: true });
}

/** Who holds the lock of `dir`, if anyone. */
export function runLockOwner(dir: string): RunLockOwner | null {
  return readOwner(join(dir, RUN_LOCK));
}
