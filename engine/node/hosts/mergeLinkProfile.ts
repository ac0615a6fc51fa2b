import type { ClusterLinkProfile, MeasuredLink } from '../../cluster/linkProfile.js';
import { loadClusterProfile, saveClusterProfile } from './clusterProfile.js';

const pairOf = (l: MeasuredLink) => [l.from, l.to].sort().join('\0');

/**
 * A new survey over the stored profile: the pairs it measured replace theirs, and the pairs it could
 * not measure (a host down or failing preflight this time) keep their earlier measurement, with its
 * time — a partial `shoal cluster test` must not forget links it did not see. Pairs of hosts no longer
 * in the cluster (`clusterHosts`) are dropped.
 */
export function mergeLinkProfiles(previous: ClusterLinkProfile | undefined, next: ClusterLinkProfile, clusterHosts: readonly string[]): ClusterLinkProfile {
  if (!previous) return next;
  const inCluster = (h: string) => clusterHosts.includes(h);
  const measured = new Set(next.links.map(pairOf));
  const kept = previous.links
    .filter((l) => !measured.has(pairOf(l)) && inCluster(l.from) && inCluster(l.to))
    .map((l) => ({ ...l, measuredAt: l.measuredAt ?? previous.measuredAt }));
  const keptHosts = kept.flatMap((l) => [l.from, l.to]).filter((h, i, all) => !next.hosts.includes(h) && all.indexOf(h) === i);
  return { ...next, hosts: [...next.hosts, ...keptHosts], links: [...next.links, ...kept] };
}

/** Store a survey's profile, merged into the cluster's stored one (a stored file that does not parse is replaced). */
export function saveSurveyProfile(profile: ClusterLinkProfile, clusterHosts: readonly string[]): { profile: ClusterLinkProfile; file: string } {
  let previous: ClusterLinkProfile | undefined;
  try {
    previous = loadClusterProfile(profile.cluster);
  } catch {
    previous = undefined;
  }
  const merged = mergeLinkProfiles(previous, profile, clusterHosts);
  return { profile: merged, file: saveClusterProfile(merged) };
}
