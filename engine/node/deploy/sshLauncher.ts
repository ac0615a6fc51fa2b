import type { SshHost } from '../hosts/host.js';
import { agentPayload } from './agentPayload.js';
import type { Payload } from './uploadPayload.js';
import { decideGpuRuntime, ensureGpuRuntime } from './gpuRuntime.js';
import { readWith, startWith, statusWith, stopWith, type ShellRunner } from './jobOps.js';
import type { Forward, LaunchTarget, Launcher, PreparedTarget, PrepareEvent, ProcessSpec, StartedProcess, TargetJobState, TargetOutcome } from './launcher.js';
import { connectHost, type ConnectOptions, type SshConnection } from './ssh/connectHost.js';
import { runRemote } from './ssh/exec.js';
import { mapBounded } from './ssh/mapBounded.js';
import { judgeFacts } from './ssh/preflightChecks.js';
import { PROBE_SCRIPT, parseProbeOutput } from './ssh/preflightProbe.js';
import { whereOf } from './ssh/sshErrors.js';
import { forwardPort } from './ssh/tunnel.js';
import { beginUpload, checkSpace, type PendingUpload } from './uploadPayload.js';
import { checkHostData } from './hostData.js';

export interface SshLauncherOptions extends ConnectOptions {
  /** Hosts worked on at once (connect, probe, upload, stop); default 8. */
  concurrency?: number;
  /** Do not install the native GPU backend on GPU hosts (agents use wasm). */
  noGpu?: boolean;
}

/**
 * Environment of agents on a host, as shell words (see startScript): the digits travel in the payload,
 * and NODE_PATH also finds the shared native backend for a bundle started from elsewhere.
 */
const mib = (bytes: number) => (bytes / 1024 ** 2).toFixed(1);

const REMOTE_ENV = { SHOAL_MNIST_DIR: '"$(dirname "$B")/mnist"', NODE_PATH: '"$HOME/.shoal/node_modules"' };

/** SSH hosts: one verified session per host (host keys checked, jump hosts followed), reused by every step. */
export class SshLauncher implements Launcher {
  readonly kind = 'ssh' as const;
  readonly targets: readonly LaunchTarget[];
  private readonly sessions = new Map<string, Promise<SshConnection>>();
  private readonly bundles = new Map<string, string>();

  constructor(
    readonly hosts: readonly SshHost[],
    private readonly options: SshLauncherOptions = {},
  ) {
    if (hosts.length === 0) throw new Error('An SSH launcher needs at least one host.');
    this.targets = hosts.map((h) => ({ alias: h.alias, peerAddress: h.address }));
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

  prepare(onProgress: (e: PrepareEvent) => void = () => {}, inputs?: Payload): Promise<PreparedTarget[]> {
    const payload = agentPayload();
    return mapBounded(this.hosts, this.options.concurrency ?? 8, async (h): Promise<PreparedTarget> => {
      let step: PrepareEvent['step'] = 'connect';
      let bundle = '';
      const emit = (status: PrepareEvent['status'], detail: string) => onProgress({ target: h.alias, step, status, detail });
      try {
        const via = h.jump.length ? ` via ${h.jump.map(whereOf).join(' → ')}` : '';
        emit('running', `connecting to ${whereOf(h)}${via}`);
        const { client } = await this.session(h.alias);
        const probe = await runRemote(client, 'sh -s', { stdin: PROBE_SCRIPT, timeoutMs: 60_000 });
        const facts = parseProbeOutput(probe.stdout);
        if (!facts.complete) throw new Error(`the host probe did not finish (exit ${probe.code}): ${probe.stderr.trim().slice(0, 300) || 'no output'}`);
        const failed = judgeFacts(facts, h.user).filter((v) => v.status === 'fail');
        if (failed.length > 0) throw new Error(failed.map((v) => `${v.step}: ${v.detail}`).join('; '));
        emit('ok', `${facts.os} ${facts.arch}, Node ${facts.node?.version}, ${facts.gpus.length ? `${facts.gpus.length} GPU(s)` : 'no GPU'}`);
        // Data meant to be on every host already is checked before anything is uploaded.
        if (inputs?.onHosts) emit('ok', await checkHostData(client, inputs.onHosts));

        step = 'upload';
        const uploads: PendingUpload[] = [];
        try {
          uploads.push(await beginUpload(client, payload, 'agent', (d) => emit('progress', d)));
          if (inputs && inputs.files.length > 0) uploads.push(await beginUpload(client, inputs, 'inputs', (d) => emit('progress', d)));
          checkSpace(uploads);
          const [agent, data] = uploads;
          emit('running', `agent build ${payload.hash}`);
          const up = await agent.run((d) => emit('progress', d));
          emit(up.uploaded ? 'ok' : 'skipped', up.uploaded ? `uploaded to ~/${up.dir}/${payload.bundle}` : `~/${up.dir}/${payload.bundle} already there`);
          bundle = `${up.dir}/${payload.bundle}`;
          if (data) {
            emit('running', `model and data ${inputs!.hash} (${mib(inputs!.bytes)} MiB, ${mib(data.needed)} MiB to send)`);
            const sent = await data.run((d) => emit('progress', d));
            emit(sent.uploaded ? 'ok' : 'skipped', sent.uploaded ? `model and data uploaded to ~/${sent.dir} (${mib(sent.sent)} MiB sent)` : `model and data ~/${sent.dir} already there (0 MiB sent)`);
          }
        } finally {
          for (const u of uploads) await u.release();
        }

        step = 'gpu-runtime';
        const gpu = decideGpuRuntime(facts, this.options.noGpu === true);
        if (!gpu.install) emit('skipped', gpu.reason);
        else {
          emit('running', gpu.gpus);
          const how = await ensureGpuRuntime(client, `${h.alias} (${whereOf(h)})`, (d) => emit('progress', d));
          emit('ok', how === 'present' ? 'native GPU backend already installed' : 'native GPU backend installed');
        }
        step = 'ready';
        emit('ok', 'ready');
        this.bundles.set(h.alias, bundle);
        return { target: h.alias, ok: true, bundle };
      } catch (err) {
        const message = `${h.alias} (${whereOf(h)}), ${step}: ${(err as Error).message}`;
        emit('fail', message);
        return { target: h.alias, ok: false, error: message };
      }
    });
  }

  start(target: string, spec: ProcessSpec): Promise<StartedProcess> {
    const bundle = this.bundles.get(target);
    if (!bundle) throw new Error(`${target} was not prepared: run prepare() before starting processes there.`);
    return startWith(this.shell(target), target, spec, bundle, REMOTE_ENV);
  }

  async forward(target: string, host: string, port: number): Promise<Forward> {
    const { client } = await this.session(target);
    return forwardPort(client, host, port, `${target} (${whereOf(this.host(target))})`);
  }

  readJobFile(target: string, jobId: string, where: 'run' | 'temp', file: string): Promise<string | undefined> {
    return readWith(this.shell(target), target, jobId, where, file);
  }

  status(jobId: string): Promise<TargetJobState[]> {
    return mapBounded(this.hosts, this.options.concurrency ?? 8, (h) =>
      statusWith(this.shell(h.alias), h.alias, jobId).catch((err: Error) => ({ target: h.alias, ok: false, present: false, processes: [], error: err.message })),
    );
  }

  async stop(jobId: string): Promise<TargetOutcome[]> {
    const stopOn = (h: SshHost, isHead: boolean) =>
      stopWith(this.shell(h.alias), h.alias, jobId, isHead).catch((err: Error): TargetOutcome => ({ target: h.alias, ok: false, error: `${h.alias}: ${err.message}` }));
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
