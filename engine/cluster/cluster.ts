import { LIMITS, LOCAL_AGENTS_OVERRIDE } from '../plan/limits.js';
import { parseClusterSpec } from './parseClusterSpec.js';
import type { ClusterSpec } from './spec.js';

/**
 * The cluster a job runs on today: N agent processes on this machine. `local:N` names it on the
 * command line; the studio calls it "This machine". `spec` describes the same machine as a
 * ClusterSpec, so that validation and the cost model treat it like any other cluster.
 */
export interface LocalCluster {
  kind: 'local';
  name: string;
  agents: number;
  spec: ClusterSpec;
}

export function localCluster(agents: number): LocalCluster {
  return { kind: 'local', name: 'This machine', agents, spec: localClusterSpec(agents) };
}

/**
 * "This machine" as a ClusterSpec: one cpu-core device per agent on host `localhost`. The loopback
 * link is what Node-to-Node TCP measured here (ENVIRONMENT.md): α = 75 µs, half the 150 µs
 * ping-pong round trip; β = 2 GB/s, a little under the 2.4 GB/s of one large loopback flow.
 */
export function localClusterSpec(agents: number): ClusterSpec {
  if (!Number.isInteger(agents) || agents < 1) throw new Error(`A local cluster needs at least 1 agent, got ${agents}.`);
  return parseClusterSpec({
    name: 'This machine',
    hosts: [{ name: 'localhost', devices: [{ preset: 'cpu-core', count: agents }], intraLink: { alpha: 75e-6, beta: 2e9 } }],
  });
}

/**
 * Parse `local` or `local:N`; `defaultAgents` (the core count, at least 2) fills in a bare `local`.
 * Every agent is a process with its own heap (≈ 60 MB), so N is capped at `maxAgents` (LIMITS.localAgents
 * unless the user raised it) before anything is started.
 */
export function parseClusterName(text: string, defaultAgents: number, maxAgents: number = LIMITS.localAgents): LocalCluster {
  const match = /^local(?::(\d+))?$/.exec(text.trim());
  if (!match) throw new Error(`Unknown cluster "${text}". Use local or local:N (N agent processes on this machine).`);
  const agents = match[1] ? Number(match[1]) : defaultAgents;
  if (agents < 1) throw new Error(`Cluster "${text}": a local cluster needs at least 1 agent.`);
  if (agents > maxAgents) {
    throw new Error(`Cluster "${text}" would start ${match[1]} agent processes on this machine; the limit is ${maxAgents}. Use fewer agents (one per core is the fastest), or raise the limit with the environment variable ${LOCAL_AGENTS_OVERRIDE}=N.`);
  }
  return localCluster(agents);
}
