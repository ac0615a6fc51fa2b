import { closeSync, openSync, readSync } from 'node:fs';
import type { Client } from 'ssh2';
import { runRemote } from './ssh/exec.js';
import { digestScript, parseDigestLines } from './fileDigest.js';
import { openSftpFiles, RESUME_MARGIN, type SftpFiles } from './sftpFiles.js';
import { DEFAULT_REMOTE_DIR, homeRelative, remoteDirWord, remotePath } from './remotePaths.js';
import { acquireUploadLock, type UploadLock } from './uploadLock.js';
import { mib } from '../byteSize.js';

/** One file of what is uploaded to a host, at `relative` under <remote dir>/<kind>/<hash>/ (remotePaths.ts). */
export interface PayloadFile {
  local: string;
  relative: string;
  bytes: number;
  /** fileDigest.ts's digest: checked on the host once uploaded (without it, only the size is). */
  digest?: string;
}

/** Data that each host already holds at `dir` (`location: "hosts"`): checked against these digests, never uploaded. */
export interface HostData {
  dir: string;
  files: Array<{ relative: string; bytes: number; digest: string }>;
}

/** Files named by a hash of their names and contents: a host keeps one folder per distinct content. */
export interface Payload {
  hash: string;
  files: PayloadFile[];
  bytes: number;
  onHosts?: HostData;
}

export interface UploadResult {
  /** The payload's folder relative to the host's $HOME, or absolute when the remote directory is not under it. */
  dir: string;
  /** False when the host already had this exact content. */
  uploaded: boolean;
  /** Bytes sent this time (less than the payload when an earlier upload was resumed). */
  sent: number;
}

/** The file, written last, that says a staging folder is whole and verified; the folder is then renamed into place. */
const MARKER = '.shoal-complete';

/**
 * Put a payload in ~/.shoal/<kind>/<hash>/ unless it is there already: the agent build (`agent`), or a
 * job's model and data (`inputs`). See beginUpload; the host's free space is checked before any byte
 * is sent.
 */
export async function uploadPayload(client: Client, payload: Payload, kind: 'agent' | 'inputs', onProgress: (detail: string) => void, remoteDir: string = DEFAULT_REMOTE_DIR): Promise<UploadResult> {
  const upload = await beginUpload(client, payload, kind, onProgress, remoteDir);
  try {
    checkSpace([upload]);
    return await upload.run(onProgress);
  } finally {
    await upload.release();
  }
}

/** An upload looked at but not started: what the host lacks, and its free space. */
export interface PendingUpload {
  what: string;
  kind: 'agent' | 'inputs';
  /** The remote directory it goes to, as users read it (~/.shoal). */
  remoteDir: string;
  /** Bytes still to send: 0 when the host has the payload, less than all when an earlier upload is continued. */
  needed: number;
  /** Free space in ~/.shoal/<kind> on the host, KiB (NaN when `df -Pk` did not answer). */
  freeKib: number;
  /** Send what is missing, verify, and put the folder in place. */
  run(onProgress: (detail: string) => void): Promise<UploadResult>;
  /** Let go of the host's upload lock and SFTP session (after run, or instead of it). */
  release(): Promise<void>;
}

/**
 * Look at what a host has of a payload. Files go to a staging folder named by the hash
 * (`.upload-<hash>`), each as `<name>.part` until it is complete; an upload cut off midway continues
 * from what the host has (the part's first bytes and those before the resume point checked against
 * this machine's) instead of starting over. Only when every file's size and digest check out on the
 * host is the marker written and the folder renamed into place, so a folder named by its hash is
 * always whole. Holds the host's lock for this payload until release().
 */
export async function beginUpload(client: Client, payload: Payload, kind: 'agent' | 'inputs', onProgress: (detail: string) => void, remoteDir: string = DEFAULT_REMOTE_DIR): Promise<PendingUpload> {
  const what = kind === 'agent' ? 'agent' : 'model and data';
  const relDir = homeRelative(remoteDir, kind, payload.hash);
  const kindDir = `${remoteDirWord(remoteDir)}/${kind}`;
  const nothing = (freeKib: number, release = async () => {}, line = `${what} ${payload.hash} already on the host: 0 MiB to upload`): PendingUpload => ({
    what, kind, remoteDir, needed: 0, freeKib, release,
    run: async (report) => (report(line), { dir: relDir, uploaded: false, sent: 0 }),
  });
  // SFTP paths are absolute: the SFTP server starts in the account's home, which may differ from $HOME.
  const check = await runRemote(client, 'sh -s', {
    stdin:
      `D=${kindDir}; mkdir -p "$D" && echo "root $D" && if [ -d "$D/${payload.hash}" ]; then echo present; fi\n` +
      `df -Pk "$D" 2>/dev/null | awk 'NR == 2 { print "free " $4 }'\n`,
    timeoutMs: 30_000,
  });
  const root = /^root (\/.*)$/m.exec(check.stdout)?.[1];
  if (!root) throw new Error(`could not create ${remotePath(remoteDir, kind)} (exit ${check.code}): ${check.stderr.trim() || 'no output'}. Check the free space and permissions there, or give the cluster another remote directory (shoal cluster add <name> --remote-dir …).`);
  const freeKib = Number(/^free (\d+)$/m.exec(check.stdout)?.[1] ?? NaN);
  if (/^present$/m.test(check.stdout)) return nothing(freeKib);

  const final = `${root}/${payload.hash}`;
  const staging = `${root}/.upload-${payload.hash}`;
  const sftp = await openSftpFiles(client);
  let lock: UploadLock | 'done' | undefined;
  const release = async () => {
    if (lock && lock !== 'done') await lock.release();
    sftp.end();
  };
  try {
    lock = await acquireUploadLock(sftp, `${staging}.lock`, async () => (await sftp.stat(final)) !== null, () => onProgress(`another deploy is uploading ${what} ${payload.hash} to this host; waiting for it`));
    // The lock's holder may have finished and let go between our look and our taking it.
    if (lock === 'done' || (await sftp.stat(final))) return nothing(freeKib, release, `${what} ${payload.hash} was uploaded by another deploy meanwhile: 0 MiB to upload`);
    // What an earlier, interrupted upload left: whole files, and parts to continue.
    const points = await Promise.all(payload.files.map((f) => resumePoint(sftp, f, `${staging}/${f.relative}`)));
    const starts = points.map((p, i) => (p === 'whole' ? payload.files[i].bytes : p));
    const already = starts.reduce((n, s) => n + s, 0);
    return {
      what, kind, remoteDir, freeKib, release,
      needed: payload.bytes - already,
      run: async (report) => {
        try {
          if (already > 0) report(`resuming: ${mib(already)} of ${mib(payload.bytes)} MiB already on the host, ${mib(payload.bytes - already)} MiB to upload`);
          await send(sftp, payload, staging, points, starts, reporter(payload.bytes, report));
          await verify(client, sftp, payload, staging, what);
          await sftp.writeFile(`${staging}/${MARKER}`, JSON.stringify({ hash: payload.hash, files: payload.files.length, bytes: payload.bytes }) + '\n');
          try {
            await sftp.rename(staging, final);
          } catch (err) {
            // Another deploy of the same content finished first (one that took no lock: an older Shoal).
            if (!(await sftp.stat(final))) throw err;
            await runRemote(client, 'sh -s', { stdin: `rm -rf ${kindDir}/.upload-${payload.hash}\n` });
          }
          report(`${mib(payload.bytes)} MiB on the host, ${mib(payload.bytes - already)} MiB sent, verified`);
          return { dir: relDir, uploaded: true, sent: payload.bytes - already };
        } catch (err) {
          // The staging folder stays: the next deploy continues from it.
          throw new Error(`uploading the ${what} to ${final} failed: ${(err as Error).message}`);
        }
      },
    };
  } catch (err) {
    await release();
    throw err;
  }
}

/**
 * The uploads bound for one host's remote directory (~/.shoal) all fit in its free space (one file system: the agent and
 * the inputs both live there), or an error naming the space needed and free.
 */
export function checkSpace(uploads: readonly PendingUpload[]): void {
  const needed = uploads.reduce((n, u) => n + u.needed, 0);
  const freeKib = Math.min(...uploads.map((u) => u.freeKib).filter((f) => Number.isFinite(f)));
  if (needed === 0 || !Number.isFinite(freeKib) || needed <= freeKib * 1024) return;
  const parts = uploads.filter((u) => u.needed > 0).map((u) => `${u.what} ${mib(u.needed)} MiB`).join(', ');
  const dir = uploads[0].remoteDir;
  throw new Error(`not enough disk space: ${mib(needed)} MiB to upload to ${dir} (${parts}), ${mib(freeKib * 1024)} MiB free there. Free space on the host (old payloads in ${remotePath(dir, 'inputs')}/ can go), give the cluster a remote directory on a larger disk (--remote-dir), or deploy without this host.`);
}

/** Send each file that is not whole yet, from where its part stops, and rename it into place. */
async function send(sftp: SftpFiles, payload: Payload, staging: string, points: Array<number | 'whole'>, starts: number[], progress: (bytes: number) => void): Promise<void> {
  if (!(await sftp.stat(staging))) await sftp.mkdir(staging);
  const dirs = new Set(payload.files.flatMap((f) => f.relative.split('/').slice(0, -1).map((_, i, parts) => parts.slice(0, i + 1).join('/'))));
  for (const dir of [...dirs].sort((a, b) => a.split('/').length - b.split('/').length)) if (!(await sftp.stat(`${staging}/${dir}`))) await sftp.mkdir(`${staging}/${dir}`);
  let done = starts.reduce((n, s) => n + s, 0);
  for (const [i, f] of payload.files.entries()) {
    if (points[i] === 'whole') continue;
    const target = `${staging}/${f.relative}`;
    const base = done - starts[i];
    // A whole file of another size (from a different earlier upload) would block the rename.
    if (await sftp.stat(target)) await sftp.unlink(target);
    await sftp.putFrom(f.local, `${target}.part`, starts[i], (written) => progress(base + written));
    await sftp.rename(`${target}.part`, target);
    done = base + f.bytes;
  }
}

/**
 * Where a file's upload continues: its full size when the whole file is there, else the part's size
 * less a margin (writes in flight when the upload was cut may have left a gap just before its end),
 * when the part's first bytes and the bytes before that point match this machine's; else 0.
 */
async function resumePoint(sftp: SftpFiles, f: PayloadFile, target: string): Promise<number | 'whole'> {
  const whole = await sftp.stat(target);
  if (whole?.size === f.bytes) return 'whole';
  const part = await sftp.stat(`${target}.part`);
  if (!part || part.size > f.bytes) return 0;
  const at = Math.max(0, part.size - RESUME_MARGIN);
  if (at === 0) return 0;
  const probe = Math.min(64 * 1024, at);
  for (const pos of [0, at - probe]) {
    const theirs = await sftp.readAt(`${target}.part`, pos, probe);
    if (!theirs.equals(readLocal(f.local, pos, probe))) return 0;
  }
  return at;
}

/** Every file's size and digest on the host against this machine's; a file that differs is removed so the next try sends it again. */
async function verify(client: Client, sftp: SftpFiles, payload: Payload, staging: string, what: string): Promise<void> {
  const out = await runRemote(client, 'node -', { stdin: digestScript(staging, payload.files.map((f) => f.relative)), timeoutMs: 600_000 });
  const theirs = parseDigestLines(out.stdout);
  const bad = payload.files.filter((f) => {
    const t = theirs.get(f.relative);
    return !t || 'error' in t || t.bytes !== f.bytes || (f.digest !== undefined && t.digest !== f.digest);
  });
  if (theirs.size === 0) throw new Error(`could not check the uploaded ${what} on the host (node - exited ${out.code}): ${out.stderr.trim().slice(0, 300) || 'no output'}`);
  if (bad.length === 0) return;
  for (const f of bad) await sftp.unlink(`${staging}/${f.relative}`).catch(() => {});
  throw new Error(`${bad.length} uploaded file(s) differ from this machine's after the upload (${bad.slice(0, 3).map((f) => f.relative).join(', ')}${bad.length > 3 ? ' …' : ''}): were they changed during the upload? They were removed; deploy again to send them anew.`);
}

function readLocal(path: string, position: number, length: number): Buffer {
  const fd = openSync(path, 'r');
  try {
    const buf = Buffer.alloc(length);
    return buf.subarray(0, readSync(fd, buf, 0, length, position));
  } finally {
    closeSync(fd);
  }
}

/**
 * Progress in MiB, a line per tenth of the payload or every 5 s, whichever comes first: finer steps would
 * flood a many-host deploy's log, coarser ones leave a big upload silent for minutes.
 */
function reporter(total: number, onProgress: (detail: string) => void): (bytes: number) => void {
  let reported = -1;
  let at = Date.now();
  return (bytes) => {
    const tenth = Math.floor((10 * bytes) / Math.max(1, total));
    if (tenth === reported && Date.now() - at < 5_000) return;
    reported = tenth;
    at = Date.now();
    onProgress(`uploading ${mib(bytes)} of ${mib(total)} MiB (${Math.floor((100 * bytes) / Math.max(1, total))}%)`);
  };
}

