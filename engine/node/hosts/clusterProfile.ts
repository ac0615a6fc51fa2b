import { existsSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { ClusterLinkProfileSchema, type ClusterLinkProfile } from '../../cluster/linkProfile.js';
import { writeFileAtomic } from './atomicWrite.js';
import { shoalConfigDir } from './configDir.js';

/**
 * A cluster's measured profile — the link survey's bandwidth and latency between every pair of hosts —
 * beside clusters.json: `<config dir>/cluster-profiles/<name>.json`, written atomically with mode 600
 * (it names the cluster's hosts). The cost model reads it through withMeasuredLinks
 * (engine/cluster/measuredLinks.ts).
 */
export function clusterProfileFile(cluster: string): string {
  // Cluster names are checked on the way in (letters, digits, dot, dash, underscore): no path tricks.
  if (!/^[A-Za-z0-9][A-Za-z0-9._-]*$/.test(cluster)) throw new Error(`"${cluster}" is not a cluster name.`);
  return join(shoalConfigDir(), 'cluster-profiles', `${cluster}.json`);
}

export function saveClusterProfile(profile: ClusterLinkProfile): string {
  const file = clusterProfileFile(profile.cluster);
  writeFileAtomic(file, JSON.stringify(ClusterLinkProfileSchema.parse(profile), null, 2) + '\n');
  return file;
}

/**
 * The stored profile of a cluster, or undefined when none was measured yet. A file that does not
 * parse is an error naming it: a new survey (shoal cluster test) replaces it.
 */
export function loadClusterProfile(cluster: string): ClusterLinkProfile | undefined {
  const file = clusterProfileFile(cluster);
  if (!existsSync(file)) return undefined;
  let json: unknown;
  try {
    json = JSON.parse(readFileSync(file, 'utf8'));
  } catch (err) {
    throw new Error(`${file} is not valid JSON (${(err as Error).message}). Run shoal cluster test ${cluster} to measure the links again, or move the file.`);
  }
  const parsed = ClusterLinkProfileSchema.safeParse(json);
  if (!parsed.success) {
    const issue = parsed.error.issues[0];
    throw new Error(`${file}: ${issue.path.join('.') || '(top level)'}: ${issue.message}. Run shoal cluster test ${cluster} to measure the links again, or move the file.`);
  }
  return parsed.data;
}
