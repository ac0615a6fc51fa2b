import { randomBytes } from 'node:crypto';
import type { SshHost } from '../../hosts/host.js';
import type { Forward } from '../launcher.js';
import type { ShellRunner } from '../jobOps.js';
import { localShell } from '../localShell.js';
import { shQuote } from '../shellQuote.js';
import { connectHost, type ConnectOptions, type SshConnection } from '../ssh/connectHost.js';
import { runRemote, type RemoteResult } from '../ssh/exec.js';
import { forwardPort } from '../ssh/tunnel.js';
import { uploadPayload, type Payload } from '../uploadPayload.js';
import { copyPayloadHere } from './localCopy.js';
import { slurmRun } from './slurmCli.js';

export type SlurmCommandOptions = { stdin?: string; timeoutMs?: number };

/**
 * The login node of a Slurm cluster, where Slurm's commands run and the job's files live: this
 * machine (`--slurm local`) or a host reached over SSH (`--slurm user@login`, with everything the SSH
 * launcher has: host keys, ProxyJump, ssh-agent). Everything the Slurm launcher does on the login node
 * goes through here, so the two differ only in this file.
 */
export interface SlurmControl {
  /** "this machine" or the login host as users wrote it, for messages. */
  readonly where: string;
  /** The account Slurm's commands run as (for sacctmgr's associations). */
  readonly user: string;
  /** The cluster's env, which Slurm's commands on the login node get too (SLURM_CONF, PATH, …). */
  readonly env: Record<string, string>;
  /** One Slurm command (sbatch, srun, squeue, …), with the cluster's env; stdin carries scripts and secrets. */
  run(program: string, args: readonly string[], options?: SlurmCommandOptions): Promise<RemoteResult>;
  /** `sh -s` on the login node. */
  readonly shell: ShellRunner;
  /** Put a payload in <remote dir>/<kind>/<hash>/ on the login node, which the nodes share. */
  copyPayload(payload: Payload, kind: 'agent' | 'inputs', remoteDir: string, onProgress: (detail: string) => void): Promise<{ dir: string; copied: boolean }>;
  /** A local endpoint for `host:port` as the login node reaches it (a node's coordinator). */
  forward(host: string, port: number): Promise<Forward>;
  close(): void;
}

const DEFAULT_TIMEOUT_MS = 60_000;

/**
 * The script that runs one Slurm command over SSH: the cluster's env exported, the program checked on the
 * PATH (a login shell over SSH may lack it until a module is loaded), then exec'd with its arguments
 * quoted and its stdin as a here-document whose delimiter the input cannot contain.
 */
export function slurmCommandScript(program: string, args: readonly string[], env: Record<string, string>, stdin?: string): string {
  const exports = Object.entries(env).map(([k, v]) => `export ${k}=${shQuote(v)}\n`);
  const missing = `${program} is not on the PATH of the login node: load Slurm there in the cluster's setup or env (e.g. --env PATH=/opt/slurm/bin:/usr/bin:/bin)`;
  const command = `exec ${[program, ...args].map(shQuote).join(' ')}`;
  let input = ' </dev/null\n';
  if (stdin !== undefined) {
    let delimiter = `SHOAL_${randomBytes(6).toString('hex')}`;
    while (stdin.includes(delimiter)) delimiter = `SHOAL_${randomBytes(6).toString('hex')}`;
    input = ` <<'${delimiter}'\n${stdin}${stdin.endsWith('\n') ? '' : '\n'}${delimiter}\n`;
  }
  return `${exports.join('')}command -v ${shQuote(program)} >/dev/null 2>&1 || { echo ${shQuote(missing)} >&2; exit 127; }\n${command}${input}`;
}

/** This machine is the login node. */
export function localSlurmControl(env: Record<string, string> = {}): SlurmControl {
  return {
    where: 'this machine',
    user: process.env.USER ?? process.env.LOGNAME ?? '',
    env,
    run: (program, args, options = {}) => slurmRun(program, args, { ...options, env }),
    shell: localShell,
    copyPayload: async (payload, kind, remoteDir) => copyPayloadHere(payload, kind, remoteDir),
    forward: async (host, port) => ({ host, port, close: () => {} }),
    close: () => {},
  };
}

/** The login node over SSH: one session, opened on first use and kept; a failed attempt is retried on the next call. */
export function sshSlurmControl(login: SshHost, env: Record<string, string> = {}, options: ConnectOptions = {}): SlurmControl {
  let session: Promise<SshConnection> | undefined;
  const connection = () => {
    if (!session) {
      const s = connectHost(login, options);
      session = s;
      s.then(
        (conn) => conn.client.once('close', () => session === s && (session = undefined)),
        () => session === s && (session = undefined),
      );
    }
    return session;
  };
  const where = `login host ${login.alias}`;
  const shell: ShellRunner = async (script) => runRemote((await connection()).client, 'sh -s', { stdin: script, timeoutMs: 120_000 });
  return {
    where,
    user: login.user,
    env,
    run: async (program, args, options = {}) =>
      runRemote((await connection()).client, 'sh -s', { stdin: slurmCommandScript(program, args, env, options.stdin), timeoutMs: options.timeoutMs ?? DEFAULT_TIMEOUT_MS }),
    shell,
    copyPayload: async (payload, kind, remoteDir, onProgress) => {
      const r = await uploadPayload((await connection()).client, payload, kind, onProgress, remoteDir);
      return { dir: r.dir, copied: r.uploaded };
    },
    forward: async (host, port) => forwardPort((await connection()).client, host, port, where),
    close: () => {
      const s = session;
      session = undefined;
      void s?.then((c) => c.close()).catch(() => {});
    },
  };
}

/** A Slurm command on the login node where a non-zero exit is an error quoting Slurm's own words. Returns stdout. */
export async function slurmOk(control: SlurmControl, program: string, args: readonly string[], options: SlurmCommandOptions = {}): Promise<string> {
  const r = await control.run(program, args, options);
  if (r.code !== 0) throw new Error(`${program} ${args.join(' ')} failed (exit ${r.code}): ${(r.stderr.trim() || r.stdout.trim() || 'no output').split('\n').slice(-6).join('\n')}`);
  return r.stdout;
}
