import { closeSync, existsSync, fsyncSync, openSync, renameSync, writeSync } from 'node:fs';
import { dirname } from 'node:path';

/** Write a new file (it must not exist) and flush it to disk before returning. */
export function writeNewFileDurably(file: string, data: Buffer, mode: number): void {
  const fd = openSync(file, 'wx', mode);
  try {
    for (let done = 0; done < data.length; ) done += writeSync(fd, data, done, data.length - done);
    fsyncSync(fd);
  } finally {
    closeSync(fd);
  }
}

/** Flush a folder's entries (a rename into it, a new file) to disk. */
export function syncFolder(dir: string): void {
  const fd = openSync(dir, 'r');
  try {
    fsyncSync(fd);
  } finally {
    closeSync(fd);
  }
}

/**
 * Move a finished folder `tmp` into its content-addressed place `dir` (rename: all or nothing). When
 * the same content got there first (two imports or drops at once), that one is kept: `marker`, a file
 * of the folder, says it is complete. Either way the parent folder is synced.
 */
export function publishFolder(tmp: string, dir: string, marker: string): void {
  try {
    renameSync(tmp, dir);
  } catch (err) {
    const code = (err as NodeJS.ErrnoException).code;
    if ((code !== 'EEXIST' && code !== 'ENOTEMPTY') || !existsSync(marker)) throw err;
  }
  syncFolder(dirname(dir));
}
