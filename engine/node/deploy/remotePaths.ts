import { createHash } from 'node:crypto';
import { DEFAULT_REMOTE_DIR } from '../../protocol/clusterSettings.js';
import { assertPlainName, shQuote } from './shellQuote.js';

/**
 * Where Shoal's files are on a host, in one place, so every script and message agrees. Under the
 * cluster's remote directory (`remoteDir`, default ~/.shoal):
 *
 *   agent/<hash>/            agent builds (content-addressed; shared by hosts that share the folder)
 *   inputs/<hash>/           a job's model and data (content-addressed)
 *   node_modules/            the native GPU backend, when installed
 *   jobs/<id>/<host>/        temporary, per host: <name>.config (the secret, mode 600), .pid, .exit, .out
 *   runs/<id>/               kept: <name>.log (names are unique in a job), events.jsonl, checkpoints/
 *
 * Job state is per host because a remote directory may be shared by several hosts (an NFS home): a
 * host only ever reads, signals and removes what it started itself.
 */

export { DEFAULT_REMOTE_DIR };

/** The remote directory as one shell word: `"$HOME"/'.shoal'`, or `'/scratch/shoal'`. */
export function remoteDirWord(remoteDir: string = DEFAULT_REMOTE_DIR): string {
  return remoteDir.startsWith('~/') ? `"$HOME"/${shQuote(remoteDir.slice(2))}` : shQuote(remoteDir);
}

/**
 * A path under the remote directory as users read it and as a process's config names it (`~/…` is
 * resolved by the host itself, engine/wire/hostPath.ts): `~/.shoal/runs/<id>`.
 */
export function remotePath(remoteDir: string = DEFAULT_REMOTE_DIR, ...parts: string[]): string {
  return [remoteDir, ...parts].join('/');
}

/** A path under the remote directory relative to $HOME when it is under it (what startScript takes), else absolute. */
export function homeRelative(remoteDir: string = DEFAULT_REMOTE_DIR, ...parts: string[]): string {
  const full = remotePath(remoteDir, ...parts);
  return full.startsWith('~/') ? full.slice(2) : full;
}

/**
 * The folder name of a host's job state: its alias when that is a plain name, else a plain form of it
 * with a hash (an alias such as `[::1]:22` or `gpu one`), so different aliases never share a folder.
 */
export function hostFolder(alias: string): string {
  if (/^[A-Za-z0-9][A-Za-z0-9._-]*$/.test(alias) && alias.length <= 100) return alias;
  const plain = alias.replace(/[^A-Za-z0-9._-]+/g, '_').replace(/^[._-]+/, '').slice(0, 60);
  return `${plain || 'host'}-${createHash('sha256').update(alias).digest('hex').slice(0, 8)}`;
}

/**
 * sh assignments for a job's folders on one host: `S` (the remote directory), `JOB` (jobs/<id>, shared),
 * `J` (jobs/<id>/<host>: this host's pids, exit codes, configs, outputs) and `R` (runs/<id>: logs,
 * history, checkpoints).
 */
export function jobDirsScript(jobId: string, host: string, remoteDir: string = DEFAULT_REMOTE_DIR): string {
  assertPlainName(jobId, 'Job id');
  return `S=${remoteDirWord(remoteDir)}; JOB="$S/jobs/${jobId}"; J="$JOB/${hostFolder(host)}"; R="$S/runs/${jobId}"`;
}

/** A job's run folder on its hosts, as users read it (`~/.shoal/runs/<id>`). */
export function remoteRunDir(jobId: string, remoteDir: string = DEFAULT_REMOTE_DIR): string {
  return remotePath(remoteDir, 'runs', assertPlainName(jobId, 'Job id'));
}

/** One host's temporary job folder, as users read it (`~/.shoal/jobs/<id>/<host>`). */
export function remoteHostJobDir(jobId: string, host: string, remoteDir: string = DEFAULT_REMOTE_DIR): string {
  return remotePath(remoteDir, 'jobs', assertPlainName(jobId, 'Job id'), hostFolder(host));
}
