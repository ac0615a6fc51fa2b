import { closeSync, fsyncSync, openSync, writeSync } from 'node:fs';

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
