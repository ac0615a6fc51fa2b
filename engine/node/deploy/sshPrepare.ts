import { randomBytes } from 'node:crypto';
import type { Client } from 'ssh2';
import type { GpuFact } from '../../cluster/nvidiaSmi.js';
import type { ClusterSettings } from '../../protocol/clusterSettings.js';
import type { SshHost } from '../hosts/host.js';
import { agentPayload } from './agentPayload.js';
import { runSetup } from './clusterSetup.js';
import { decideGpuRuntime, ensureGpuRuntime } from './gpuRuntime.js';
import { checkHostData } from './hostData.js';
import type { PreparedTarget, PrepareEvent } from './launcher.js';
import { DEFAULT_REMOTE_DIR, remotePath } from './remotePaths.js';
import { cleanupScript, markScript, parseSeen, seenScript, shareGroups } from './sharedRemoteDir.js';
import type { SshConnection } from './ssh/connectHost.js';
import { runRemote } from './ssh/exec.js';
import { mapBounded } from './ssh/mapBounded.js';
import { judgeFacts } from './ssh/preflightChecks.js';
import { PROBE_SCRIPT, parseProbeOutput, type ProbeFacts } from './ssh/preflightProbe.js';
import { whereOf } from './ssh/sshErrors.js';
import { beginUpload, checkSpace, type Payload, type PendingUpload } from './uploadPayload.js';
import { mib } from '../byteSize.js';

export interface PrepareContext {
  hosts: readonly SshHost[];
  session(alias: string): Promise<SshConnection>;
  concurrency: number;
  noGpu: boolean;
  /** Hosts with GPUs tfjs-node-gpu cannot use train on their CPU instead of being refused. */
  allowCpuFallback: boolean;
  settings: ClusterSettings;
}

interface HostState {
  host: SshHost;
  step: PrepareEvent['step'];
  emit(status: PrepareEvent['status'], detail: string): void;
  client?: Client;
  facts?: ProbeFacts;
  bundle?: string;
  /** The GPUs its agents are pinned to: those of a host whose GPU backend is installed. */
  gpus?: GpuFact[];
  error?: string;
}


/**
 * Make SSH hosts ready to run a job's processes, in phases over all hosts (each bounded in parallel;
 * one host's failure is reported for that host and stops only it):
 *   1. connect, probe, check data meant to be on the hosts, run the cluster's setup commands, and
 *      mark the remote directory;
 *   2. find which hosts share the remote directory (sharedRemoteDir.ts);
 *   3. per shared folder, upload the agent build and the job's inputs once (the first host of the
 *      group), then install the native GPU backend where there are GPUs, one host of a group at a time.
 */
export async function prepareSshHosts(ctx: PrepareContext, onProgress: (e: PrepareEvent) => void, inputs?: Payload): Promise<PreparedTarget[]> {
  const payload = agentPayload();
  const remoteDir = ctx.settings.remoteDir ?? DEFAULT_REMOTE_DIR;
  const nonce = randomBytes(8).toString('hex');
  const states = ctx.hosts.map((host): HostState => {
    const s: HostState = { host, step: 'connect', emit: (status, detail) => onProgress({ target: host.alias, step: s.step, status, detail }) };
    return s;
  });
  const fail = (s: HostState, err: unknown) => {
    s.error = `${s.host.alias} (${whereOf(s.host)}), ${s.step}: ${(err as Error).message}`;
    s.emit('fail', s.error);
  };
  const live = () => states.filter((s) => s.error === undefined);

  await mapBounded(states, ctx.concurrency, async (s) => {
    try {
      await checkHost(ctx, s, inputs);
      s.step = 'setup';
      await setupHost(ctx, s);
      s.step = 'upload';
      const marked = await runRemote(s.client!, 'sh -s', { stdin: markScript(remoteDir, nonce, s.host.alias), timeoutMs: 30_000 });
      if (!/^marked$/m.test(marked.stdout)) throw new Error(`could not write to the remote directory ${remoteDir} (exit ${marked.code}): ${marked.stderr.trim().slice(0, 300) || 'no output'}. Check its permissions and free space, or give the cluster another one (shoal cluster add <name> --remote-dir …).`);
    } catch (err) {
      fail(s, err);
    }
  });

  const seen = new Map<string, string[]>();
  const ready = live();
  await mapBounded(ready, ctx.concurrency, async (s) => {
    const others = ready.map((o) => o.host.alias).filter((a) => a !== s.host.alias);
    try {
      const r = await runRemote(s.client!, 'sh -s', { stdin: seenScript(remoteDir, nonce, others), timeoutMs: 30_000 });
      seen.set(s.host.alias, parseSeen(r.stdout, others));
    } catch (err) {
      fail(s, err);
    }
  });
  const groups = shareGroups(live().map((s) => s.host.alias), seen).map((g) => g.map((a) => states.find((s) => s.host.alias === a)!));

  await mapBounded(groups, ctx.concurrency, async ([first, ...rest]) => {
    await runRemote(first.client!, 'sh -s', { stdin: cleanupScript(remoteDir, nonce), timeoutMs: 30_000 }).catch(() => {});
    try {
      first.bundle = await uploadTo(first, payload, remoteDir, inputs);
    } catch (err) {
      fail(first, err);
    }
    for (const s of rest) {
      if (first.bundle === undefined) fail(s, new Error(`it shares ${remoteDir} with ${first.host.alias}, where the upload failed (see there)`));
      else {
        s.bundle = first.bundle;
        s.emit('skipped', `shares ${remoteDir} with ${first.host.alias}: agent build${inputs?.files.length ? ', model and data' : ''} uploaded once, there`);
      }
    }
    // One host of a shared folder at a time: the GPU backend goes to the folder's node_modules once.
    for (const s of [first, ...rest].filter((x) => x.error === undefined)) {
      try {
        s.step = 'gpu-runtime';
        const gpu = decideGpuRuntime(s.facts!, ctx);
        if (!gpu.install) s.emit('skipped', gpu.reason);
        else {
          s.emit('running', gpu.gpus);
          const how = await ensureGpuRuntime(s.client!, `${s.host.alias} (${whereOf(s.host)})`, (d) => s.emit('progress', d), remoteDir);
          s.emit('ok', how === 'present' ? 'native GPU backend already installed' : 'native GPU backend installed');
          s.gpus = s.facts!.gpus;
        }
        s.step = 'ready';
        s.emit('ok', 'ready');
      } catch (err) {
        fail(s, err);
      }
    }
  });

  return states.map((s) =>
    s.error === undefined ? { target: s.host.alias, ok: true, bundle: s.bundle!, cpus: s.facts?.cpus, gpus: s.gpus ?? [], cpuFallback: ctx.allowCpuFallback } : { target: s.host.alias, ok: false, error: s.error },
  );
}

async function checkHost(ctx: PrepareContext, s: HostState, inputs?: Payload): Promise<void> {
  const h = s.host;
  const via = h.jump.length ? ` via ${h.jump.map(whereOf).join(' → ')}` : '';
  s.emit('running', `connecting to ${whereOf(h)}${via}`);
  s.client = (await ctx.session(h.alias)).client;
  const probe = await runRemote(s.client, 'sh -s', { stdin: PROBE_SCRIPT, timeoutMs: 60_000 });
  const facts = parseProbeOutput(probe.stdout);
  if (!facts.complete) throw new Error(`the host probe did not finish (exit ${probe.code}): ${probe.stderr.trim().slice(0, 300) || 'no output'}`);
  const failed = judgeFacts(facts, h.user).filter((v) => v.status === 'fail');
  if (failed.length > 0) throw new Error(failed.map((v) => `${v.step}: ${v.detail}`).join('; '));
  s.facts = facts;
  s.emit('ok', `${facts.os} ${facts.arch}, Node ${facts.node?.version}, ${facts.gpus.length ? `${facts.gpus.length} GPU(s)` : 'no GPU'}`);
  // Data meant to be on every host already is checked before anything is uploaded.
  if (inputs?.onHosts) s.emit('ok', await checkHostData(s.client, inputs.onHosts));
}

/** The cluster's setup commands, their output as progress; env values are never shown, only names. */
async function setupHost(ctx: PrepareContext, s: HostState): Promise<void> {
  const commands = ctx.settings.setup ?? [];
  const env = ctx.settings.env ?? {};
  if (commands.length === 0) return;
  const names = Object.keys(env);
  s.emit('running', `${commands.length} setup command${commands.length === 1 ? '' : 's'}${names.length ? ` (env ${names.join(', ')})` : ''}`);
  await runSetup(
    (script, onLine) => runRemote(s.client!, 'sh -s', { stdin: script, timeoutMs: 30 * 60_000, onLine }),
    commands,
    env,
    (p) => s.emit('progress', p.line === undefined ? `[${p.index}/${commands.length}] $ ${p.command.split('\n')[0].slice(0, 160)}` : `[${p.index}/${commands.length}] ${p.line}`),
  );
  s.emit('ok', `${commands.length} setup command${commands.length === 1 ? '' : 's'} done`);
}

/** The agent build and the job's inputs to one host (the first of its shared folder); returns the bundle's path. */
async function uploadTo(s: HostState, payload: ReturnType<typeof agentPayload>, remoteDir: string, inputs?: Payload): Promise<string> {
  s.step = 'upload';
  const client = s.client!;
  const progress = (d: string) => s.emit('progress', d);
  const uploads: PendingUpload[] = [];
  try {
    uploads.push(await beginUpload(client, payload, 'agent', progress, remoteDir));
    if (inputs && inputs.files.length > 0) uploads.push(await beginUpload(client, inputs, 'inputs', progress, remoteDir));
    checkSpace(uploads);
    const [agent, data] = uploads;
    s.emit('running', `agent build ${payload.hash}`);
    const up = await agent.run(progress);
    const at = remotePath(remoteDir, 'agent', payload.hash, payload.bundle);
    s.emit(up.uploaded ? 'ok' : 'skipped', up.uploaded ? `uploaded to ${at}` : `${at} already there`);
    if (data) {
      s.emit('running', `model and data ${inputs!.hash} (${mib(inputs!.bytes)} MiB, ${mib(data.needed)} MiB to send)`);
      const sent = await data.run(progress);
      const dir = remotePath(remoteDir, 'inputs', inputs!.hash);
      s.emit(sent.uploaded ? 'ok' : 'skipped', sent.uploaded ? `model and data uploaded to ${dir} (${mib(sent.sent)} MiB sent)` : `model and data ${dir} already there (0 MiB sent)`);
    }
    return `${up.dir}/${payload.bundle}`;
  } finally {
    for (const u of uploads) await u.release();
  }
}
