import type { HostPreflight } from '../deploy/ssh/preflight.js';
import { saveClusterTest, type SshCluster } from './clusterStore.js';
import { testRecord, type ClusterTestRecord } from './clusterTestRecord.js';
import type { SurveyOutcome } from './surveyAfterPreflight.js';

/** The link survey's outcome as the stored test keeps it: pairs measured, or why there are none. */
function linksOf(survey: SurveyOutcome | undefined): ClusterTestRecord['links'] {
  if (!survey) return undefined;
  if ('profile' in survey) return { state: 'done', pairs: survey.profile.links.length };
  if ('skipped' in survey) return { state: 'skipped', detail: survey.skipped };
  return { state: 'failed', detail: survey.error };
}

/**
 * Store a finished connection test of `cluster` (the hosts as they were tested) with the cluster, the
 * studio's test and `shoal cluster test` alike, so the studio reads the latest one whoever ran it.
 */
export function storeClusterTest(cluster: SshCluster, results: HostPreflight[], survey: SurveyOutcome | undefined, at = Date.now()): void {
  saveClusterTest(cluster.name, testRecord(cluster.hosts, results, linksOf(survey), at));
}
