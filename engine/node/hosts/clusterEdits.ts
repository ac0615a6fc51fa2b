import { existsSync, renameSync, rmSync } from 'node:fs';
import type { ClusterSettings } from '../../protocol/clusterSettings.js';
import { clusterProfileFile, loadClusterProfile, saveClusterProfile } from './clusterProfile.js';
import { clusterSettingsOf, clustersFile, loadClusters, saveClusters, type SshCluster } from './clusterStore.js';
import type { SshHost } from './host.js';
import { hostsFromSpecs } from './hostSpecs.js';

/**
 * Changes to stored clusters beyond adding hosts — rename or remove a cluster, change or remove a host —
 * shared by `shoal cluster rename|remove|edit` and the studio's Cluster view. Each rewrites clusters.json
 * atomically; the cluster's measured links (cluster-profiles/<name>.json) follow a rename, go with the
 * cluster, and are dropped when a host they measured moves to another address (they describe the old one).
 */

function requireCluster(clusters: SshCluster[], name: string): SshCluster {
  const cluster = clusters.find((c) => c.name === name);
  if (!cluster) {
    const names = clusters.map((c) => c.name);
    throw new Error(`No cluster "${name}" in ${clustersFile()}. ${names.length ? `Clusters: ${names.join(', ')}.` : 'There are no clusters yet.'}`);
  }
  return cluster;
}

function requireHost(cluster: SshCluster, alias: string): number {
  const i = cluster.hosts.findIndex((h) => h.alias === alias);
  if (i < 0) throw new Error(`Cluster ${cluster.name} has no host "${alias}". Its hosts: ${cluster.hosts.map((h) => h.alias).join(', ') || 'none'}.`);
  return i;
}

function dropProfile(name: string): void {
  rmSync(clusterProfileFile(name), { force: true });
}

/** Remove a cluster and its measured links. */
export function removeCluster(name: string): void {
  const clusters = loadClusters();
  requireCluster(clusters, name);
  saveClusters(clusters.filter((c) => c.name !== name));
  dropProfile(name);
}

/** Rename a cluster; its measured links are stored under the new name. */
export function renameCluster(name: string, to: string): void {
  const clusters = loadClusters();
  const cluster = requireCluster(clusters, name);
  if (name === to) return;
  if (clusters.some((c) => c.name === to)) throw new Error(`A cluster "${to}" exists already: pick another name, or remove that one first.`);
  cluster.name = to;
  saveClusters(clusters);
  const old = clusterProfileFile(name);
  if (!existsSync(old)) return;
  try {
    const profile = loadClusterProfile(name);
    if (profile) saveClusterProfile({ ...profile, cluster: to });
    rmSync(old, { force: true });
  } catch {
    // An unreadable profile moves as it is: the next test rewrites it.
    renameSync(old, clusterProfileFile(to));
  }
}

/** Remove one host; a cluster left without hosts is removed. Returns whether the cluster went too. */
export function removeHost(name: string, alias: string): { clusterRemoved: boolean } {
  const clusters = loadClusters();
  const cluster = requireCluster(clusters, name);
  cluster.hosts.splice(requireHost(cluster, alias), 1);
  if (cluster.hosts.length === 0) {
    saveClusters(clusters.filter((c) => c !== cluster));
    dropProfile(name);
    return { clusterRemoved: true };
  }
  saveClusters(clusters);
  return { clusterRemoved: false };
}

/**
 * Change a host's address (`user@address[:port]`), key or jump chain. `identityFile` / `jump`
 * undefined: kept; empty: cleared. Settings imported from an ssh config (agent, IdentitiesOnly) are
 * kept. A host named by its address is renamed with it; one with its own alias keeps that alias.
 */
export function editHost(name: string, alias: string, change: { address: string; identityFile?: string; jump?: string }): SshHost {
  const clusters = loadClusters();
  const cluster = requireCluster(clusters, name);
  const i = requireHost(cluster, alias);
  const old = cluster.hosts[i];
  const others = cluster.hosts.filter((_, j) => j !== i);
  const [made] = hostsFromSpecs([change.address], { identityFile: change.identityFile || undefined, jump: change.jump ?? '', existing: others });
  const host: SshHost = {
    ...old,
    alias: old.alias === old.address ? made.alias : old.alias,
    address: made.address,
    port: made.port,
    user: made.user,
    identityFiles: change.identityFile === undefined ? old.identityFiles : made.identityFiles,
    jump: change.jump === undefined ? old.jump : made.jump,
  };
  if (others.some((h) => h.alias === host.alias)) throw new Error(`Cluster ${name} has another host called "${host.alias}" already.`);
  const moved = host.address !== old.address || host.port !== old.port || host.alias !== old.alias;
  cluster.hosts[i] = host;
  saveClusters(clusters);
  if (moved) dropProfile(name);
  return host;
}

/** Replace a cluster's settings as a whole: a remote directory, setup commands or env left out is cleared. */
export function setClusterSettings(name: string, settings: ClusterSettings): void {
  const clusters = loadClusters();
  const cluster = requireCluster(clusters, name);
  delete cluster.remoteDir;
  delete cluster.setup;
  delete cluster.env;
  Object.assign(cluster, clusterSettingsOf(settings));
  saveClusters(clusters);
}
