import { createWriteStream, existsSync, mkdirSync, renameSync, statfsSync, statSync, utimesSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { pipeline } from 'node:stream/promises';
import type { SshHost } from '../hosts/host.js';
import type { DeployRecord } from '../jobs/deployRecord.js';
import { connectHost, type ConnectOptions, type SshConnection } from './ssh/connectHost.js';
import { mapBounded } from './ssh/mapBounded.js';
import { whereOf } from './ssh/sshErrors.js';
import { runRemote } from './ssh/exec.js';
import { remoteDirWord, remoteRunDir } from './remotePaths.js';
import { assertPlainName } from './shellQuote.js';
import { localRunFiles, sftpRunFiles, type RunFile, type RunFileSource } from './runFileSources.js';
import { mib } from '../byteSize.js';

/** One line of a pull's progress, per host. */
export interface PullEvent {
  host: string;
  status: 'running' | 'progress' | 'ok' | 'skipped' | 'fail';
  detail: string;
}

/** What a pull did on one host; a host's failure is reported here, never thrown. */
export interface HostPull {
  host: string;
  ok: boolean;
  /** Where its files went on this machine. */
  into: string;
  copied: number;
  /** Files already here with the same size and modification time. */
  unchanged: number;
  bytes: number;
  error?: string;
}

export interface PullOptions extends ConnectOptions {
  /** Which of a host's files to copy (default: every one). */
  select?: (files: RunFile[], host: string, isHead: boolean) => RunFile[];
  /** Only these hosts (default: every host of the job). */
  hosts?: string[];
  onProgress?: (e: PullEvent) => void;
}

/** Files of the local run folder that this machine wrote: a host's file of the same name never replaces them. */
const LOCAL_ONLY = new Set(['deploy.json', 'job.json', 'run.lock', 'control.json']);
const PART = '.part';
/** A progress line at most every this many bytes of one file. */
const PROGRESS_EVERY = 8 * 1024 ** 2;

/**
 * Copy a deployed job's run folder home: the head host's (checkpoints, profile, events, the
 * coordinator's and its agents' logs) into the local run folder, every other host's into
 * `hosts/<alias>/` there. Idempotent and resumable, as rsync's quick check: a file already here with
 * the same size and mtime is skipped; a copy goes to `<file>.part` first and a cut one continues from
 * its length (run files are written once or only appended to). Files are streamed, never held in
 * memory. Space is checked before a host's copy starts, and a full disk is said as such.
 */
export async function pullRun(record: DeployRecord, runDir: string, options: PullOptions = {}): Promise<HostPull[]> {
  const say = options.onProgress ?? (() => {});
  // A Slurm job's run folder is in the login node's (this machine's) remote directory, shared by its nodes.
  const targets =
    record.launcher === 'local' ? [{ alias: 'localhost', host: undefined }] : record.launcher === 'slurm' ? [{ alias: record.head, host: undefined }] : record.hosts.map((h) => ({ alias: h.alias, host: h }));
  const wanted = options.hosts ? targets.filter((t) => options.hosts!.includes(t.alias)) : targets;
  return mapBounded(wanted, 4, async ({ alias, host }): Promise<HostPull> => {
    const isHead = alias === record.head || record.launcher === 'local';
    const into = isHead ? runDir : join(runDir, 'hosts', alias);
    const result: HostPull = { host: alias, ok: false, into, copied: 0, unchanged: 0, bytes: 0 };
    let conn: SshConnection | undefined;
    let source: RunFileSource | undefined;
    try {
      if (host) say({ host: alias, status: 'running', detail: `connecting to ${whereOf(host)}` });
      ({ conn, source } = await openSource(record, host, options));
      const listed = await source.list();
      if (!listed) {
        if (isHead) throw new Error(`Job ${record.jobId} has no run folder at ${source.where}: its coordinator may never have started there (shoal attach ${record.jobId} says how it went).`);
        say({ host: alias, status: 'skipped', detail: `no run folder at ${source.where} (no process of the job wrote there)` });
        return { ...result, ok: true };
      }
      const files = (options.select ? options.select(listed, alias, isHead) : listed).filter((f) => !(isHead && LOCAL_ONLY.has(f.path)) && !f.path.endsWith(PART));
      const todo = files.filter((f) => !sameFile(join(into, f.path), f));
      result.unchanged = files.length - todo.length;
      const needed = todo.reduce((n, f) => n + f.size - partLength(join(into, f.path), f), 0);
      checkSpace(into, needed);
      say({ host: alias, status: 'running', detail: `${todo.length} of ${files.length} files to copy (${mib(needed)} MiB) from ${source.where} into ${into}` });
      for (const f of todo) result.bytes += await copyFile(source, f, join(into, f.path), (d) => say({ host: alias, status: 'progress', detail: d }));
      result.copied = todo.length;
      say({ host: alias, status: 'ok', detail: `${result.copied} copied (${mib(result.bytes)} MiB), ${result.unchanged} already here` });
      return { ...result, ok: true };
    } catch (err) {
      const where = host ? `${alias} (${whereOf(host)})` : alias;
      const error = `${where}: ${(err as Error).message}`;
      say({ host: alias, status: 'fail', detail: error });
      return { ...result, error };
    } finally {
      source?.close();
      conn?.close();
    }
  });
}

async function openSource(record: DeployRecord, host: SshHost | undefined, options: ConnectOptions): Promise<{ conn?: SshConnection; source: RunFileSource }> {
  if (!host) return { source: localRunFiles(record.jobId, record.launcher === 'slurm' ? record.settings?.remoteDir : undefined) };
  const conn = await connectHost(host, options);
  try {
    // SFTP paths are absolute: its server starts in the account's home, which may differ from $HOME.
    const remoteDir = record.settings?.remoteDir;
    const r = await runRemote(conn.client, 'sh -s', { stdin: `R=${remoteDirWord(remoteDir)}/runs/${assertPlainName(record.jobId, 'Job id')}\nif [ -d "$R" ]; then cd "$R" && echo "dir $(pwd)"; else echo absent; fi\n`, timeoutMs: 30_000 });
    const dir = /^dir (\/.*)$/m.exec(r.stdout)?.[1];
    const shown = `${host.alias}:${remoteRunDir(record.jobId, remoteDir)}`;
    if (!dir && !/^absent$/m.test(r.stdout)) throw new Error(`could not look for ${shown} (exit ${r.code}): ${r.stderr.trim() || 'no output'}`);
    return { conn, source: await sftpRunFiles(conn.client, shown, dir ?? null) };
  } catch (err) {
    conn.close();
    throw err;
  }
}

/** The quick check: the same size and modification time (a copy takes its source's mtime). */
function sameFile(local: string, f: RunFile): boolean {
  if (!existsSync(local)) return false;
  const s = statSync(local);
  return s.isFile() && s.size === f.size && Math.floor(s.mtimeMs / 1000) === f.mtime;
}

/** How much of `f` an earlier, cut copy left in `<local>.part` (0 when none, or when it cannot be a prefix). */
function partLength(local: string, f: RunFile): number {
  const part = local + PART;
  if (!existsSync(part)) return 0;
  const size = statSync(part).size;
  return size <= f.size ? size : 0;
}

/** Refuse before copying what does not fit, naming the folder, the sizes and what to do. */
function checkSpace(into: string, needed: number): void {
  let dir = into;
  while (!existsSync(dir) && dirname(dir) !== dir) dir = dirname(dir);
  const fs = statfsSync(dir);
  const free = fs.bavail * fs.bsize;
  if (needed > free) throw new Error(`the disk holding ${dir} has ${mib(free)} MiB free and this copy needs ${mib(needed)} MiB: free some space (or move the run folders with SHOAL_DATA_DIR), then run shoal pull again; files already copied are kept.`);
}

/** Stream one file into `<local>.part` (continuing a cut copy), then rename it into place with the source's mtime. */
async function copyFile(source: RunFileSource, f: RunFile, local: string, progress: (detail: string) => void): Promise<number> {
  mkdirSync(dirname(local), { recursive: true });
  const part = local + PART;
  const start = partLength(local, f);
  const input = source.read(f.path, start);
  let got = 0;
  let said = 0;
  input.on('data', (chunk: Buffer) => {
    got += chunk.length;
    if (got - said >= PROGRESS_EVERY) {
      said = got;
      progress(`${f.path}  ${mib(start + got)} of ${mib(f.size)} MiB`);
    }
  });
  try {
    await pipeline(input, createWriteStream(part, { flags: start > 0 ? 'a' : 'w' }));
  } catch (err) {
    const e = err as NodeJS.ErrnoException;
    if (e.code === 'ENOSPC') throw new Error(`the disk is full: writing ${part} failed (ENOSPC). Free some space, then run shoal pull again; it continues this file from the ${mib(start + got)} MiB already copied.`);
    throw new Error(`copying ${source.where}/${f.path} to ${part} failed: ${e.message}. Run shoal pull again to continue it.`);
  }
  renameSync(part, local);
  utimesSync(local, f.mtime, f.mtime);
  progress(`${f.path}  ${mib(start + got)} MiB${start ? ` (continued from ${mib(start)} MiB)` : ''}`);
  return got;
}
