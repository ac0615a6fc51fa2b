import type { ClusterLinkProfile } from '../../cluster/linkProfile.js';
import type { HostPreflight } from '../deploy/ssh/preflight.js';
import { saveSurveyProfile } from './mergeLinkProfile.js';
import { clusterSettingsOf, type SshCluster } from './clusterStore.js';
import { surveyLinks, type SurveyOptions } from './surveyLinks.js';

/** What the survey part of a cluster test came to. */
export type SurveyOutcome = { profile: ClusterLinkProfile; file: string } | { skipped: string } | { error: string };

/**
 * The link survey a cluster test runs after preflight (the CLI and the studio alike): over the hosts
 * that passed, when there are two or more; hosts that failed are left out and named with their failed
 * steps. A measured matrix is merged into the cluster's stored profile. Undefined for a one-host cluster.
 */
export async function surveyAfterPreflight(cluster: SshCluster, results: HostPreflight[], options: SurveyOptions): Promise<SurveyOutcome | undefined> {
  if (cluster.hosts.length < 2) return undefined;
  const ready = cluster.hosts.filter((h) => results.find((r) => r.host === h.alias)?.ok);
  const leftOut = results
    .filter((r) => !r.ok)
    .map((r) => ({ host: r.host, reason: `failed preflight: ${r.steps.filter((s) => s.status === 'fail').map((s) => `${s.step}: ${s.detail.split('\n')[0]}`).join('; ')}` }));
  if (ready.length < 2) return { skipped: `it needs two hosts that pass preflight, and ${ready.length} did.` };
  try {
    const profile = await surveyLinks(cluster.name, ready, leftOut, { ...options, settings: clusterSettingsOf(cluster) });
    // Pairs this survey could not measure keep their stored measurement.
    return saveSurveyProfile(profile, cluster.hosts.map((h) => h.alias));
  } catch (err) {
    return { error: (err as Error).message };
  }
}
