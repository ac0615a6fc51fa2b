import type { ClusterLinkProfile } from './linkProfile.js';
import type { ClusterSpec, Link } from './spec.js';

/**
 * The surveyed links as the cost model's α-β links: one host-pair link per measured pair (the pair's
 * best of both directions, should both be there), and the median of them as the inter-host default
 * for pairs that were not measured. Feed them to withMeasuredLinks, or write them into a cluster JSON's
 * `links` section (`hostPairs`, `interHost`).
 */
export function measuredHostLinks(profile: ClusterLinkProfile): { interHost: Link; hostPairs: Array<{ hosts: [string, string]; link: Link }> } {
  if (profile.links.length === 0) throw new Error(`The link profile of cluster ${profile.cluster} has no measured pair: run shoal cluster test ${profile.cluster} again.`);
  const byPair = new Map<string, { hosts: [string, string]; link: Link }>();
  for (const l of profile.links) {
    const hosts = [l.from, l.to].sort() as [string, string];
    const key = hosts.join('\u0000');
    const had = byPair.get(key);
    byPair.set(key, { hosts, link: had ? { alpha: Math.min(had.link.alpha, l.alpha), beta: Math.max(had.link.beta, l.beta) } : { alpha: l.alpha, beta: l.beta } });
  }
  const hostPairs = [...byPair.values()];
  return { interHost: { alpha: median(hostPairs.map((p) => p.link.alpha)), beta: median(hostPairs.map((p) => p.link.beta)) }, hostPairs };
}

/**
 * `spec` with the links between its hosts replaced by what the survey measured: every measured pair of
 * hosts that the spec has (matched by host name = alias) becomes a host-pair link, and a spec without
 * an inter-host link gets the measured median. Links inside a host and the devices are untouched; pairs
 * the survey did not see keep the spec's own inter-host link (the datasheet default).
 */
export function withMeasuredLinks(spec: ClusterSpec, profile: ClusterLinkProfile): ClusterSpec {
  const names = new Set(spec.hosts.map((h) => h.name));
  const measured = measuredHostLinks(profile);
  const applies = measured.hostPairs.filter((p) => names.has(p.hosts[0]) && names.has(p.hosts[1]) && p.hosts[0] !== p.hosts[1]);
  if (applies.length === 0) {
    throw new Error(`None of the hosts surveyed in cluster ${profile.cluster} (${profile.hosts.join(', ')}) is a pair of hosts of the cluster spec "${spec.name}" (${[...names].join(', ')}): name the spec's hosts by their aliases in clusters.json.`);
  }
  const same = (a: [string, string], b: [string, string]) => (a[0] === b[0] && a[1] === b[1]) || (a[0] === b[1] && a[1] === b[0]);
  const kept = spec.hostPairs.filter((p) => !applies.some((m) => same(m.hosts, p.hosts)));
  return { ...spec, interHost: spec.interHost ?? measured.interHost, hostPairs: [...kept, ...applies.map((p) => ({ hosts: p.hosts, link: p.link }))] };
}

function median(xs: number[]): number {
  const s = [...xs].sort((a, b) => a - b);
  const mid = s.length >> 1;
  return s.length % 2 ? s[mid] : (s[mid - 1] + s[mid]) / 2;
}
