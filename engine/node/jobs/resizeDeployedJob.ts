import type { Launcher, PrepareEvent } from '../deploy/launcher.js';
import { LocalLauncher } from '../deploy/localLauncher.js';
import { SshLauncher, type SshLauncherOptions } from '../deploy/sshLauncher.js';
import { findCluster, loadClusters } from '../hosts/clusterStore.js';
import type { SshHost } from '../hosts/host.js';
import type { MembershipEvent } from './controlFile.js';
import { writeDeployRecord, type DeployRecord } from './deployRecord.js';
import { followEvents, type CoordinatorAddress } from './jobControl.js';
import { resizeJob } from './resizeJob.js';
import { agentConfig } from './jobConfigs.js';
import { resizeInputs, type JobReads } from './resizeInputs.js';
import type { Payload } from '../deploy/uploadPayload.js';

/** Agents to add on one host: a host of the job's cluster (or any stored cluster) by alias. */
export interface HostAgents {
  host: string;
  count: number;
}

export interface DeployedResizeOutcome {
  membership: MembershipEvent;
  started: Array<{ target: string; name: string; pid: number }>;
}

/**
 * Where a host named in `--add` is described: the job's own hosts first, then the cluster it was
 * deployed from, then any stored cluster. A `local` job (LocalLauncher) has one host, this machine.
 */
export function resolveAddedHosts(record: DeployRecord, wanted: HostAgents[]): SshHost[] {
  if (record.launcher === 'local') {
    const other = wanted.find((w) => w.host !== 'local' && w.host !== 'localhost');
    if (other) throw new Error(`Job ${record.jobId} runs on this machine only (deployed to the local cluster); it cannot grow onto ${other.host}. Add agents with --add local[:N].`);
    return [];
  }
  const stored = [...(findCluster(record.cluster)?.hosts ?? []), ...loadClusters().flatMap((c) => c.hosts)];
  return wanted.map(({ host }) => {
    if (host === 'local' || host === 'localhost') throw new Error(`Job ${record.jobId} runs on SSH hosts (${record.hosts.map((h) => h.alias).join(', ')}); name one of them, or another stored host, instead of ${host}.`);
    const found = record.hosts.find((h) => h.alias === host) ?? stored.find((h) => h.alias === host);
    if (!found) throw new Error(`No host "${host}": it is not one of job ${record.jobId}'s hosts (${record.hosts.map((h) => h.alias).join(', ')}) nor in a stored cluster. Add it first: shoal cluster add ${record.cluster} --host user@address`);
    return found;
  });
}

/**
 * Resize a deployed job while it runs: prepare the hosts that get new agents (upload only when the
 * agent build is missing there), ask the coordinator through an SSH forward, start the agents there
 * detached (they join on their own), and wait for the generation that applies the request. The job's
 * deploy.json gains the new processes, so `shoal stop` ends them too.
 */
export async function resizeDeployedJob(
  record: DeployRecord,
  runDir: string,
  request: { add: HostAgents[]; remove: number[] },
  options: SshLauncherOptions & { onProgress?: (line: string) => void; onPrepare?: (e: PrepareEvent) => void } = {},
): Promise<DeployedResizeOutcome> {
  const say = options.onProgress ?? (() => {});
  const added = resolveAddedHosts(record, request.add);
  const head = record.hosts.find((h) => h.alias === record.head);
  const remote = added.filter((h) => h.alias !== record.head);
  if (remote.length && record.coordinator.listenHost === '127.0.0.1') {
    throw new Error(
      `Job ${record.jobId}'s coordinator listens on 127.0.0.1 on ${record.head}, because every agent was placed there; agents on ${remote.map((h) => h.alias).join(', ')} could not reach it. Add agents on ${record.head} (--add ${record.head}:N), or deploy the job over several hosts to grow it onto others.`,
    );
  }
  // The head (its forward reaches the coordinator) and the hosts that get agents, head first.
  const hosts = head ? [head, ...added.filter((h, i) => h.alias !== head.alias && added.findIndex((x) => x.alias === h.alias) === i)] : [];
  const launcher: Launcher = record.launcher === 'local' ? new LocalLauncher() : new SshLauncher(hosts, { ...options, ...(record.settings ? { settings: record.settings } : {}) });
  let at: (CoordinatorAddress & { close(): void }) | undefined;
  try {
    const { reads, ...coordinator } = (at = await coordinatorAddress(launcher, record));
    const targets = expandTargets(launcher, record, request.add);
    // A new host needs the job's model and data too (a user's model file, an uploaded dataset): the files the job trains on.
    const newHosts = added.filter((h) => !record.hosts.some((x) => x.alias === h.alias)).map((h) => h.alias);
    if (targets.length) {
      const inputs = record.launcher === 'local' ? null : resizeInputs(runDir, { jobId: record.jobId, reads, remoteDir: record.settings?.remoteDir, newHosts });
      await prepareTargets(launcher, new Set(targets), options.onPrepare ?? (() => {}), inputs);
    }

    const id = record.jobId;
    let latest: MembershipEvent | undefined;
    const started: DeployedResizeOutcome['started'] = [];
    const membership = await resizeJob(
      {
        jobId: id,
        at: coordinator,
        // The coordinator replays the history first (in one burst): it says who holds which rank now,
        // which a removal is checked against. Live events follow while training goes on.
        events: (onEvent, onEnd) =>
          followEvents(
            coordinator,
            (e) => {
              if (e.type === 'membership') latest = e;
              onEvent(e);
            },
            onEnd,
          ),
        replayMs: 1000,
        current: () => latest,
        onProgress: say,
        startAgents: async () => {
          let next = record.processes.filter((p) => p.role === 'agent').length;
          for (const target of targets) {
            const name = `agent-${next++}`;
            const peer = launcher.targets.find((t) => t.alias === target)!.peerAddress;
            const agent = await launcher.start(target, { jobId: id, role: 'agent', name, config: agentConfig(coordinator.secret, { host: record.coordinator.listenHost, port: record.coordinator.port }, peer, target) });
            record.processes.push(agent);
            writeDeployRecord(runDir, record);
            started.push({ target, name, pid: agent.pid });
            say(`started ${name} on ${target} (pid ${agent.pid})`);
          }
          for (const h of added) if (!record.hosts.some((x) => x.alias === h.alias)) record.hosts.push(h);
          writeDeployRecord(runDir, record);
        },
      },
      { add: targets.length, remove: request.remove },
    );
    return { membership, started };
  } finally {
    at?.close();
    launcher.close();
  }
}

/**
 * The coordinator as this machine reaches it: through the head's SSH session, with the secret read from
 * the head's mode-600 file (kept in memory only), and the model and data files it tells agents to read.
 */
async function coordinatorAddress(launcher: Launcher, record: DeployRecord): Promise<CoordinatorAddress & { reads: JobReads; close(): void }> {
  const head = launcher.targets[0].alias;
  const config = await launcher.readJobFile(head, record.jobId, 'temp', 'coordinator.config');
  if (config === undefined) throw new Error(`Job ${record.jobId} is not running: its coordinator has no config file left on ${record.head} (it finished, failed or was stopped). See it with: shoal attach ${record.jobId}`);
  const { secret, model, training } = JSON.parse(config) as JobReads & { secret?: unknown };
  const forward = await launcher.forward(head, record.coordinator.listenHost, record.coordinator.port);
  return { host: forward.host, port: forward.port, secret: String(secret ?? ''), reads: { model, training }, close: () => forward.close() };
}

/** One launch target per new agent, in the order asked. */
function expandTargets(launcher: Launcher, record: DeployRecord, add: HostAgents[]): string[] {
  return add.flatMap(({ host, count }) => {
    const target = record.launcher === 'local' ? launcher.targets[0].alias : host;
    return Array.from({ length: count }, () => target);
  });
}

/** Prepare the launcher's hosts, reporting those that get agents; one of them that cannot be prepared stops the resize before it is asked. */
async function prepareTargets(launcher: Launcher, targets: Set<string>, onPrepare: (e: PrepareEvent) => void, inputs: Payload | null): Promise<void> {
  const prepared = await launcher.prepare((e: PrepareEvent) => {
    if (targets.has(e.target)) onPrepare(e);
  }, inputs ?? undefined);
  const failed = prepared.filter((p) => targets.has(p.target) && !p.ok);
  if (failed.length) throw new Error(`The resize was not requested: ${failed.map((f) => f.error).join('; ')}`);
}
