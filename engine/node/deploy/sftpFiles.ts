import { open as openLocal } from 'node:fs/promises';
import type { Client, SFTPWrapper } from 'ssh2';

/** Bytes per write request, and how many may be in flight: a 1 MiB window keeps a long link busy. */
const CHUNK = 64 * 1024;
const WINDOW = 16;
/** How far back a resumed file is rewritten: every byte before it was written before the cut. */
export const RESUME_MARGIN = CHUNK * WINDOW;

/**
 * The SFTP calls a resumable upload needs, as promises whose errors name the remote path: stat, read
 * back a few bytes, write a local file from an offset (append to a partial upload), rename, and the
 * lock folder's calls.
 */
export interface SftpFiles {
  mkdir(path: string): Promise<void>;
  /** The size of a path and its mtime (seconds), or null when it does not exist. */
  stat(path: string): Promise<{ size: number; mtime: number; isDirectory: boolean } | null>;
  readAt(path: string, position: number, length: number): Promise<Buffer>;
  /** Write `local` from byte `start` on into `remote` (created when start is 0); `onBytes` gets the remote file's length acknowledged so far. */
  putFrom(local: string, remote: string, start: number, onBytes: (written: number) => void): Promise<void>;
  writeFile(remote: string, text: string): Promise<void>;
  rename(from: string, to: string): Promise<void>;
  rmdir(path: string): Promise<void>;
  unlink(path: string): Promise<void>;
  touch(path: string): Promise<void>;
  end(): void;
}

export function openSftpFiles(client: Client): Promise<SftpFiles> {
  return new Promise((resolve, reject) => {
    client.sftp((err, sftp: SFTPWrapper) => {
      if (err) return reject(new Error(`the host refused an SFTP session (${err.message}); enable "Subsystem sftp" in its sshd_config`));
      const call = <T>(what: string, path: string, fn: (cb: (e: Error | null | undefined, v?: T) => void) => void) =>
        new Promise<T>((ok, fail) => fn((e, v) => (e ? fail(new Error(`SFTP ${what} ${path}: ${e.message}`)) : ok(v as T))));
      const openRemote = (path: string, flags: 'r' | 'r+' | 'w') => call<Buffer>('open', path, (cb) => sftp.open(path, flags, { mode: 0o644 }, cb));
      const closeRemote = (path: string, h: Buffer) => call<void>('close', path, (cb) => sftp.close(h, cb));
      const write = (path: string, h: Buffer, buf: Buffer, at: number) => call<void>('write', path, (cb) => sftp.write(h, buf, 0, buf.length, at, cb));

      resolve({
        mkdir: (path) => call('mkdir', path, (cb) => sftp.mkdir(path, cb)),
        stat: (path) =>
          new Promise((ok, fail) =>
            sftp.stat(path, (e, s) => {
              if (!e) return ok({ size: s.size, mtime: s.mtime, isDirectory: s.isDirectory() });
              // 2 is SSH_FX_NO_SUCH_FILE.
              if ((e as Error & { code?: number }).code === 2) return ok(null);
              fail(new Error(`SFTP stat ${path}: ${e.message}`));
            }),
          ),
        async readAt(path, position, length) {
          const h = await openRemote(path, 'r');
          try {
            const buf = Buffer.alloc(length);
            let got = 0;
            while (got < length) {
              const n = await call<number>('read', path, (cb) => sftp.read(h, buf, got, length - got, position + got, (e, bytes) => cb(e, bytes)));
              if (n === 0) break;
              got += n;
            }
            return buf.subarray(0, got);
          } finally {
            await closeRemote(path, h).catch(() => {});
          }
        },
        async putFrom(local, remote, start, onBytes) {
          const h = await openRemote(remote, start > 0 ? 'r+' : 'w');
          const file = await openLocal(local, 'r');
          try {
            const size = (await file.stat()).size;
            let failure: Error | undefined;
            let acked = start;
            const inFlight = new Set<Promise<void>>();
            for (let pos = start; pos < size && !failure; pos += CHUNK) {
              const buf = Buffer.allocUnsafe(Math.min(CHUNK, size - pos));
              const { bytesRead } = await file.read(buf, 0, buf.length, pos);
              if (bytesRead !== buf.length) throw new Error(`${local} shrank while it was being uploaded; upload it again once it is complete.`);
              // Each write settles into `failure`, never a rejection nobody awaits.
              const p: Promise<void> = write(remote, h, buf, pos).then(
                () => onBytes((acked += buf.length)),
                (e: Error) => void (failure ??= e),
              ).catch((e: Error) => void (failure ??= e)).finally(() => inFlight.delete(p));
              inFlight.add(p);
              if (inFlight.size >= WINDOW) await Promise.race(inFlight);
            }
            await Promise.all(inFlight);
            if (failure) throw failure;
          } finally {
            await file.close();
            await closeRemote(remote, h).catch(() => {});
          }
        },
        async writeFile(remote, text) {
          const h = await openRemote(remote, 'w');
          try {
            await write(remote, h, Buffer.from(text), 0);
          } finally {
            await closeRemote(remote, h);
          }
        },
        rename: (from, to) => call('rename', `${from} → ${to}`, (cb) => sftp.rename(from, to, cb)),
        rmdir: (path) => call('rmdir', path, (cb) => sftp.rmdir(path, cb)),
        unlink: (path) => call('unlink', path, (cb) => sftp.unlink(path, cb)),
        touch: (path) => {
          const now = Date.now() / 1000;
          return call('utimes', path, (cb) => sftp.utimes(path, now, now, cb));
        },
        end: () => sftp.end(),
      });
    });
  });
}
