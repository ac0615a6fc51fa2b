import type { SshHost } from '../hosts/host.js';
import type { ClusterSettings } from '../../protocol/clusterSettings.js';
import type { Payload } from './uploadPayload.js';
import { readWith, startWith, statusWith, stopWith, type ShellRunner } from './jobOps.js';
import type { Forward, LaunchTarget, Launcher, PreparedTarget, PrepareEvent, ProcessSpec, StartedProcess, TargetJobState, TargetOutcome } from './launcher.js';
import { connectHost, type ConnectOptions, type SshConnection } from './ssh/connectHost.js';
import { runRemote } from './ssh/exec.js';
import { mapBounded } from './ssh/mapBounded.js';
import { whereOf } from './ssh/sshErrors.js';
import { forwardPort } from './ssh/tunnel.js';
import { DEFAULT_REMOTE_DIR, remoteDirWord } from './remotePaths.js';
import { prepareSshHosts } from './sshPrepare.js';

export interface SshLauncherOptions extends ConnectOptions {
  /** Hosts worked on at once (connect, probe, upload, stop); default 8. */
  concurrency?: number;
  /** Do not install the native GPU backend on GPU hosts (agents use wasm). */
  noGpu?: boolean;
  /** Hosts whose GPUs tfjs-node-gpu cannot use run their agents on the CPU instead of being refused. */
  allowCpuFallback?: boolean;
  /** The cluster's remote directory, setup commands and env. */
  settings?: ClusterSettings;
}

/**
 * Environment of agents on a host, as shell words (see startScript): the digits travel in the payload,
 * and NODE_PATH also finds the shared native backend for a bundle started from elsewhere.
 */
const remoteEnv = (remoteDir: string) => ({ SHOAL_MNIST_DIR: '"$(dirname "$B")/mnist"', NODE_PATH: `${remoteDirWord(remoteDir)}/node_modules` });

/** SSH hosts: one verified session per host (host keys checked, jump hosts followed), reused by every step. */
export class SshLauncher implements Launcher {
  readonly kind = 'ssh' as const;
  readonly targets: readonly LaunchTarget[];
  private readonly sessions = new Map<string, Promise<SshConnection>>();
  private readonly bundles = new Map<string, string>();
  readonly settings: ClusterSettings;
  private readonly remoteDir: string;

  constructor(
    readonly hosts: readonly SshHost[],
    private readonly options: SshLauncherOptions = {},
  ) {
    if (hosts.length === 0) throw new Error('An SSH launcher needs at least one host.');
    this.targets = hosts.map((h) => ({ alias: h.alias, peerAddress: h.address }));
    this.settings = options.settings ?? {};
    this.remoteDir = this.settings.remoteDir ?? DEFAULT_REMOTE_DIR;
  }

  private host(alias: string): SshHost {
    const h = this.hosts.find((x) => x.alias === alias);
    if (!h) throw new Error(`No host "${alias}" in this job (hosts: ${this.hosts.map((x) => x.alias).join(', ')}).`);
    return h;
  }

  /** The host's session, opened once; a failed attempt is forgotten so the next call tries again. */
  private session(alias: string): Promise<SshConnection> {
    let s = this.sessions.get(alias);
    if (!s) {
      s = connectHost(this.host(alias), this.options);
      this.sessions.set(alias, s);
      s.then(
        (conn) => conn.client.once('close', () => this.sessions.get(alias) === s && this.sessions.delete(alias)),
        () => this.sessions.delete(alias),
      );
    }
    return s;
  }

  private shell(alias: string): ShellRunner {
    return async (script) => runRemote((await this.session(alias)).client, 'sh -s', { stdin: script, timeoutMs: 120_000 });
  }

  async prepare(onProgress: (e: PrepareEvent) => void = () => {}, inputs?: Payload): Promise<PreparedTarget[]> {
    const prepared = await prepareSshHosts(
      { hosts: this.hosts, session: (alias) => this.session(alias), concurrency: this.options.concurrency ?? 8, noGpu: this.options.noGpu === true, allowCpuFallback: this.options.allowCpuFallback === true, settings: this.settings },
      onProgress,
      inputs,
    );
    for (const p of prepared) if (p.ok && p.bundle) this.bundles.set(p.target, p.bundle);
    return prepared;
  }

  start(target: string, spec: ProcessSpec): Promise<StartedProcess> {
    const bundle = this.bundles.get(target);
    if (!bundle) throw new Error(`${target} was not prepared: run prepare() before starting processes there.`);
    return startWith(this.shell(target), target, spec, { bundle, remoteDir: this.remoteDir, env: remoteEnv(this.remoteDir), clusterEnv: this.settings.env ?? {} });
  }

  async forward(target: string, host: string, port: number): Promise<Forward> {
    const { client } = await this.session(target);
    return forwardPort(client, host, port, `${target} (${whereOf(this.host(target))})`);
  }

  readJobFile(target: string, jobId: string, where: 'run' | 'temp', file: string): Promise<string | undefined> {
    return readWith(this.shell(target), target, jobId, where, file, { remoteDir: this.remoteDir });
  }

  status(jobId: string): Promise<TargetJobState[]> {
    return mapBounded(this.hosts, this.options.concurrency ?? 8, (h) =>
      statusWith(this.shell(h.alias), h.alias, jobId, { remoteDir: this.remoteDir }).catch((err: Error) => ({ target: h.alias, ok: false, present: false, processes: [], error: err.message })),
    );
  }

  async stop(jobId: string): Promise<TargetOutcome[]> {
    const stopOn = (h: SshHost, isHead: boolean) =>
      stopWith(this.shell(h.alias), h.alias, jobId, isHead, { remoteDir: this.remoteDir }).catch((err: Error): TargetOutcome => ({ target: h.alias, ok: false, error: `${h.alias}: ${err.message}` }));
    // The head (the coordinator's host) first: agents stopped before the coordinator would make it
    // record the job as failed, a lost stage, before its own signal arrived.
    const [head, ...others] = this.hosts;
    const headOutcome = await stopOn(head, true);
    return [headOutcome, ...(await mapBounded(others, this.options.concurrency ?? 8, (h) => stopOn(h, false)))];
  }

  close(): void {
    for (const s of this.sessions.values()) s.then((c) => c.close(), () => {});
    this.sessions.clear();
  }
}
