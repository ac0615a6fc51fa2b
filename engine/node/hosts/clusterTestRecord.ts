import { z } from 'zod';
import type { HostFacts, StoredClusterTest } from '../../protocol/clusters.js';
import type { HostPreflight } from '../deploy/ssh/preflight.js';
import { endpointLabel, type JumpHop, type SshHost } from './host.js';

/**
 * A cluster's last connection test as stored with it in clusters.json, so that what it found outlives
 * the studio session: when it finished, each host's verdict (ready, or its first failed step) with the
 * cores and devices preflight found, and how the link survey went. Each host's verdict carries the
 * connection it was made over; a host added or changed since (another address, user, port, key or jump
 * chain) is not covered by it, so an edit never leaves a stale "ready" behind.
 */
const HostFactsSchema = z.strictObject({
  os: z.string().optional(),
  arch: z.string().optional(),
  cpus: z.number().int().nonnegative().optional(),
  memoryBytes: z.number().nonnegative().optional(),
  diskFreeBytes: z.number().nonnegative().optional(),
  node: z.string().optional(),
  gpus: z.array(z.string()),
});

export const ClusterTestRecordSchema = z.strictObject({
  /** When the test finished, ms since the epoch. */
  at: z.number().int().nonnegative(),
  hosts: z.array(
    z.strictObject({
      host: z.string().min(1),
      /** How the host was reached (connectionOf): a host reached otherwise now was not tested so. */
      connection: z.string().min(1),
      ok: z.boolean(),
      /** The first failed step and its first line, when not ok. */
      why: z.string().optional(),
      facts: HostFactsSchema.optional(),
    }),
  ),
  /** The link survey after preflight (absent for one host): measured pairs, or why it did not run. */
  links: z.strictObject({ state: z.enum(['done', 'failed', 'skipped']), pairs: z.number().int().nonnegative().optional(), detail: z.string().optional() }).optional(),
});
export type ClusterTestRecord = z.infer<typeof ClusterTestRecordSchema>;

const hop = (h: Pick<JumpHop, 'user' | 'address' | 'port' | 'identityFiles'>) => `${h.user}@${endpointLabel(h)}${h.identityFiles.length ? ` key ${h.identityFiles.join(',')}` : ''}`;

/** Everything about a host that decides whether a test of it still holds: address, user, port, keys, agent, jumps. */
export function connectionOf(host: SshHost): string {
  const agent = host.useAgent ? '' : ' no-agent';
  const only = host.identitiesOnly ? ' identities-only' : '';
  const socket = host.identityAgent ? ` agent ${host.identityAgent}` : '';
  return `${hop(host)}${agent}${only}${socket}${host.jump.map((j) => ` via ${hop(j)}`).join('')}`;
}

/** What preflight found on a host, as the studio shows it. */
export function hostFacts(f: NonNullable<HostPreflight['facts']>): HostFacts {
  return { os: f.os, arch: f.arch, cpus: f.cpus, memoryBytes: f.memoryBytes, diskFreeBytes: f.diskFreeBytes, node: f.node?.version, gpus: f.gpus.map((g) => g.name) };
}

/** The first failed step of a host, in a line. */
export function failedStep(steps: Array<{ step: string; status: string; detail: string }>): string {
  const step = steps.find((s) => s.status === 'fail');
  return step ? `${step.step}: ${step.detail.split('\n')[0]}` : 'failed';
}

/** The record of a finished test of `hosts` (the hosts as they were tested). */
export function testRecord(hosts: SshHost[], results: HostPreflight[], links: ClusterTestRecord['links'], at: number): ClusterTestRecord {
  return {
    at,
    hosts: results.flatMap((r) => {
      const host = hosts.find((h) => h.alias === r.host);
      if (!host) return [];
      return [{ host: r.host, connection: connectionOf(host), ok: r.ok, ...(r.ok ? {} : { why: failedStep(r.steps) }), ...(r.facts ? { facts: hostFacts(r.facts) } : {}) }];
    }),
    ...(links ? { links } : {}),
  };
}

/**
 * What a stored test still says of the cluster's hosts as they are now: the verdicts of hosts reached
 * as they were then, and the hosts it does not cover (added or changed since). Pure.
 */
export function currentTest(hosts: SshHost[], record: ClusterTestRecord | undefined): StoredClusterTest | undefined {
  if (!record) return undefined;
  const verdicts = hosts.flatMap((h) => {
    const found = record.hosts.find((r) => r.host === h.alias && r.connection === connectionOf(h));
    return found ? [{ host: found.host, ok: found.ok, ...(found.why ? { why: found.why } : {}), ...(found.facts ? { facts: found.facts } : {}) }] : [];
  });
  const untested = hosts.filter((h) => !verdicts.some((v) => v.host === h.alias)).map((h) => h.alias);
  return { at: record.at, hosts: verdicts, untested, ...(record.links ? { links: record.links } : {}) };
}
