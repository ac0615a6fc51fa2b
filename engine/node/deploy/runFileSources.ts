import { createReadStream, existsSync, readdirSync, statSync } from 'node:fs';
import { homedir } from 'node:os';
import { join, posix } from 'node:path';
import type { Readable } from 'node:stream';
import type { Client, SFTPWrapper } from 'ssh2';
import { hostPath } from '../../wire/hostPath.js';

/** One file of a run folder on a host: its path relative to the folder, its size and mtime (seconds). */
export interface RunFile {
  path: string;
  size: number;
  mtime: number;
}

/**
 * A job's run folder on one host, as `shoal pull` reads it: every file under it, and a stream of one
 * file from an offset (a partial copy continues where it stopped; a file is never held in memory).
 */
export interface RunFileSource {
  /** Where the folder is, for messages: `h2:~/.shoal/runs/<id>`. */
  readonly where: string;
  /** Every regular file under the folder; null when the folder does not exist there. */
  list(): Promise<RunFile[] | null>;
  read(path: string, start: number): Readable;
  close(): void;
}

/**
 * A run folder on this machine: a detached local job's (~/.shoal/runs/<id>), or a Slurm job's in the
 * cluster's remote directory on this login node.
 */
export function localRunFiles(jobId: string, remoteDir?: string): RunFileSource {
  const root = remoteDir ? join(hostPath(remoteDir), 'runs', jobId) : join(process.env.HOME ?? homedir(), '.shoal', 'runs', jobId);
  return {
    where: `localhost:${root}`,
    async list() {
      if (!existsSync(root)) return null;
      const files: RunFile[] = [];
      const walk = (rel: string) => {
        for (const entry of readdirSync(join(root, rel), { withFileTypes: true })) {
          const path = rel ? `${rel}/${entry.name}` : entry.name;
          if (entry.isDirectory()) walk(path);
          else if (entry.isFile()) {
            const s = statSync(join(root, path));
            files.push({ path, size: s.size, mtime: Math.floor(s.mtimeMs / 1000) });
          }
        }
      };
      walk('');
      return files;
    },
    read: (path, start) => createReadStream(join(root, path), { start }),
    close: () => {},
  };
}

/** A folder on an SSH host (`dir`: its absolute path; null when it does not exist), over one SFTP session; `shown` names it in messages. */
export async function sftpRunFiles(client: Client, shown: string, dir: string | null): Promise<RunFileSource> {
  const label = shown.split(':')[0];
  const sftp = await new Promise<SFTPWrapper>((resolve, reject) =>
    client.sftp((err, s) => (err ? reject(new Error(`${label} refused an SFTP session (${err.message}); enable "Subsystem sftp" in its sshd_config`)) : resolve(s))),
  );
  const readdir = (path: string) =>
    new Promise<Array<{ filename: string; attrs: { size: number; mtime: number; isDirectory(): boolean; isFile(): boolean } }> | null>((resolve, reject) =>
      sftp.readdir(path, (err, list) => {
        // 2 is SSH_FX_NO_SUCH_FILE.
        if (err) return (err as Error & { code?: number }).code === 2 ? resolve(null) : reject(new Error(`SFTP readdir ${label}:${path}: ${err.message}`));
        resolve(list as never);
      }),
    );
  return {
    where: shown,
    async list() {
      if (dir === null) return null;
      const top = await readdir(dir);
      if (!top) return null;
      const files: RunFile[] = [];
      const walk = async (rel: string, entries: NonNullable<Awaited<ReturnType<typeof readdir>>>) => {
        for (const e of entries) {
          const path = rel ? `${rel}/${e.filename}` : e.filename;
          if (e.attrs.isDirectory()) await walk(path, (await readdir(posix.join(dir!, path))) ?? []);
          else if (e.attrs.isFile()) files.push({ path, size: e.attrs.size, mtime: e.attrs.mtime });
        }
      };
      await walk('', top);
      return files;
    },
    // ssh2 keeps a few 32 KiB requests in flight and honours back-pressure: memory stays bounded.
    read: (path, start) => sftp.createReadStream(posix.join(dir ?? '.', path), { start }),
    close: () => sftp.end(),
  };
}
