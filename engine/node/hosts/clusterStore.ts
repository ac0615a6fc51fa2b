import { existsSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { z } from 'zod';
import { describeIssues } from '../../protocol/describeIssues.js';
import { readRecord, type RecordFormat } from '../../protocol/versionedRecord.js';
import { ClusterSettingsSchema, type ClusterSettings } from '../../protocol/clusterSettings.js';
import { SlurmSettingsSchema } from '../../protocol/slurmSettings.js';
import { writeFileAtomic } from './atomicWrite.js';
import { ClusterTestRecordSchema, type ClusterTestRecord } from './clusterTestRecord.js';
import { shoalConfigDir } from './configDir.js';
import { SshHostSchema, type SshHost } from './host.js';

/**
 * A named set of SSH hosts, as the user registered it with `shoal cluster add|import`, with its
 * settings (remote directory, setup commands, env: engine/protocol/clusterSettings.ts) and what its
 * last connection test found (clusterTestRecord.ts).
 */
export const SshClusterSchema = z.strictObject({
  name: z.string().min(1),
  hosts: z.array(SshHostSchema),
  ...ClusterSettingsSchema.shape,
  /**
   * Present for a cluster reached through Slurm: Slurm picks the nodes, so `hosts` is empty, or holds
   * the one login host when Slurm's commands run there over SSH (`slurm.login` "ssh").
   */
  slurm: SlurmSettingsSchema.optional(),
  lastTest: ClusterTestRecordSchema.optional(),
});
export type SshCluster = z.infer<typeof SshClusterSchema>;

/** The settings part of a stored cluster (or a cluster file), only those it sets. */
export function clusterSettingsOf(c: ClusterSettings): ClusterSettings {
  return { ...(c.remoteDir ? { remoteDir: c.remoteDir } : {}), ...(c.setup?.length ? { setup: c.setup } : {}), ...(c.env && Object.keys(c.env).length ? { env: c.env } : {}) };
}

/** The version of clusters.json this Shoal writes; change it, with an upgrade, when the schema changes. */
export const CLUSTER_STORE_VERSION = 2;
const StoreFileSchema = z.strictObject({
  version: z.literal(CLUSTER_STORE_VERSION),
  clusters: z.array(SshClusterSchema),
});
/** clusters.json carried version 1 from the start; version 2 lets a Slurm cluster's login be an SSH host (version 1's were all local). */
export const CLUSTER_STORE_FORMAT: RecordFormat<typeof StoreFileSchema> = { what: 'cluster store (clusters.json)', version: CLUSTER_STORE_VERSION, schema: StoreFileSchema, upgrades: { 1: (older) => older } };

export function clustersFile(): string {
  return join(shoalConfigDir(), 'clusters.json');
}

/**
 * All clusters, from clusters.json in the config directory. A file that does not parse is an error that
 * names it — never silently replaced, so a hand-edit gone wrong loses nothing.
 */
export function loadClusters(): SshCluster[] {
  const path = clustersFile();
  if (!existsSync(path)) return [];
  let json: unknown;
  try {
    json = JSON.parse(readFileSync(path, 'utf8'));
  } catch (err) {
    throw new Error(`${path} is not valid JSON (${(err as Error).message}). Fix or move the file; Shoal will not overwrite it.`);
  }
  try {
    return readRecord(CLUSTER_STORE_FORMAT, json, path).clusters;
  } catch (err) {
    throw new Error(`${(err as Error).message} Fix or move the file; Shoal will not overwrite it.`);
  }
}

export function findCluster(name: string): SshCluster | undefined {
  return loadClusters().find((c) => c.name === name);
}

/**
 * Create the cluster or add hosts to it. A host alias already in the cluster is replaced by the new one.
 * `settings` replace the cluster's (a remote directory, the setup commands as a whole list) or add to
 * them (env variables, by name).
 */
export function saveClusterHosts(name: string, hosts: SshHost[], settings: ClusterSettings = {}): SshCluster {
  const clusters = loadClusters();
  let cluster = clusters.find((c) => c.name === name);
  if (!cluster) {
    cluster = { name, hosts: [] };
    clusters.push(cluster);
  }
  for (const host of hosts) {
    const i = cluster.hosts.findIndex((h) => h.alias === host.alias);
    if (i >= 0) cluster.hosts[i] = host;
    else cluster.hosts.push(host);
  }
  if (settings.remoteDir) cluster.remoteDir = settings.remoteDir;
  if (settings.setup?.length) cluster.setup = settings.setup;
  if (settings.env && Object.keys(settings.env).length) cluster.env = { ...cluster.env, ...settings.env };
  saveClusters(clusters);
  return cluster;
}

/**
 * Keep what a finished connection test found with the cluster. A cluster removed or renamed while
 * the test ran keeps nothing: the record is of hosts that are no longer stored under that name.
 */
export function saveClusterTest(name: string, record: ClusterTestRecord): void {
  const clusters = loadClusters();
  const cluster = clusters.find((c) => c.name === name);
  if (!cluster) return;
  cluster.lastTest = record;
  saveClusters(clusters);
}

/** Replace every stored cluster (atomically: a crash leaves the old file or the new one). */
/** Checked against the store's schema first: whatever path a change came by, nothing invalid is written. */
export function saveClusters(clusters: SshCluster[]): void {
  const store = { version: CLUSTER_STORE_VERSION, clusters };
  const checked = StoreFileSchema.safeParse(store);
  if (!checked.success) throw new Error(`The clusters were not saved: ${describeIssues(checked.error.issues)}.`);
  writeFileAtomic(clustersFile(), JSON.stringify(store, null, 2) + '\n');
}
