import { localClusterSpec } from '../../../engine/cluster/cluster';
import { parseClusterSpec } from '../../../engine/cluster/parseClusterSpec';
import type { ClusterSpec } from '../../../engine/cluster/spec';
import { storedClusterSpec, type HostDevices, type StoredCluster } from '../../../engine/cluster/storedClusterSpec';
import dgx from '../../../examples/clusters/dgx-a100-2x8.json';
import hetero from '../../../examples/clusters/hetero-v100-t4.json';
import whale from '../../../examples/clusters/whale-64xv100.json';

/**
 * The clusters a plan can be made for: "This machine" (N local agent processes, the only one the
 * studio trains on today) and the example specs, for planning and pricing bigger hardware.
 */
export const CLUSTER_CHOICES = ['local', 'whale-64xv100', 'hetero-v100-t4', 'dgx-a100-2x8'] as const;
/** A built-in choice, or `ssh:<name>`: a cluster stored in clusters.json, priced from its last test. */
export type ClusterChoice = (typeof CLUSTER_CHOICES)[number] | `ssh:${string}`;

/** The stored SSH clusters as specs, kept current by the Clusters store (setStoredClusters). */
const stored = new Map<string, { spec: ClusterSpec; assumed: string[]; hosts: number }>();

export const storedChoice = (name: string): ClusterChoice => `ssh:${name}`;
export const storedChoices = (): ClusterChoice[] => [...stored.keys()].map(storedChoice);

/**
 * Replace the stored clusters' specs: each from its hosts, the cores and GPUs its last test found,
 * and its measured links. A spec object changes only when its inputs did, so a plan priced on it is
 * priced again exactly then.
 */
export function setStoredClusters(clusters: StoredCluster[], facts: Record<string, Record<string, HostDevices>>): void {
  const names = new Set(clusters.map((c) => c.name));
  for (const name of stored.keys()) if (!names.has(name)) stored.delete(name);
  for (const c of clusters) {
    if (c.hosts.length === 0) continue;
    const key = JSON.stringify([c, facts[c.name] ?? {}]);
    if (storedKeys.get(c.name) === key) continue;
    storedKeys.set(c.name, key);
    stored.set(c.name, { ...storedClusterSpec(c, facts[c.name] ?? {}), hosts: c.hosts.length });
  }
}
const storedKeys = new Map<string, string>();

const EXAMPLES: Record<Exclude<ClusterChoice, 'local'>, unknown> = { 'whale-64xv100': whale, 'hetero-v100-t4': hetero, 'dgx-a100-2x8': dgx };
const parsed = new Map<string, ClusterSpec>();

export function clusterSpec(choice: ClusterChoice, agents: number): ClusterSpec {
  // A stored cluster no longer there (removed in another window) prices as this machine until the picker resets.
  if (choice.startsWith('ssh:')) return stored.get(choice.slice(4))?.spec ?? clusterSpec('local', agents);
  const key = choice === 'local' ? `local:${agents}` : choice;
  let spec = parsed.get(key);
  if (!spec) {
    spec = choice === 'local' ? localClusterSpec(agents) : parseClusterSpec(EXAMPLES[choice as Exclude<ClusterChoice, 'local' | `ssh:${string}`>]);
    parsed.set(key, spec);
  }
  return spec;
}

export function clusterLabel(choice: ClusterChoice, agents: number): string {
  if (choice === 'local') return `This machine (${agents} agent${agents === 1 ? '' : 's'})`;
  if (choice.startsWith('ssh:')) {
    const found = stored.get(choice.slice(4));
    if (!found) return `${choice.slice(4)} (no longer stored)`;
    return `${choice.slice(4)} — stored, ${found.hosts} host${found.hosts === 1 ? '' : 's'}, ${found.spec.devices.length} devices`;
  }
  const spec = clusterSpec(choice, agents);
  return `${choice} (${spec.devices.length} devices)`;
}

/** What pricing on a stored cluster assumes for lack of a test (shown under the picker). */
export function storedAssumptions(choice: ClusterChoice): string[] {
  return choice.startsWith('ssh:') ? (stored.get(choice.slice(4))?.assumed ?? []) : [];
}

export const isStoredChoice = (choice: string): boolean => choice.startsWith('ssh:');
