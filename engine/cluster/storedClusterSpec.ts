import { DEVICE_PRESETS } from './devicePresets.js';
import type { ClusterLinkProfile } from './linkProfile.js';
import { withMeasuredLinks } from './measuredLinks.js';
import { parseClusterSpec } from './parseClusterSpec.js';
import type { ClusterSpec } from './spec.js';

/**
 * A stored SSH cluster (clusters.json) as a ClusterSpec, so a plan can be judged and priced on it
 * before it is deployed there. Devices come from what the last connection test found on each host: a
 * device per GPU whose name matches a datasheet preset, else one `cpu-core` device per CPU (agents run
 * on tfjs wasm there). Links between hosts are the last link survey's where there is one, else 1 Gb/s
 * Ethernet. `assumed` says in words what was not measured, for the picker to show. Pure.
 */
export interface StoredCluster {
  name: string;
  hosts: Array<{ alias: string }>;
  links?: ClusterLinkProfile;
}

export interface HostDevices {
  cpus?: number;
  gpus: string[];
}

/** Inside a host: the loopback Node-to-Node TCP measured here (as localClusterSpec). */
const LOOPBACK = { alpha: 75e-6, beta: 2e9 };
/** Between hosts before a survey: 1 Gb/s Ethernet, 100 µs. */
const ETHERNET = { alpha: 100e-6, beta: 1.25e8 };

/** The datasheet preset of a GPU from its name as nvidia-smi gives it ("NVIDIA A100-SXM4-80GB" → a100-80gb). */
export function gpuPreset(name: string): string | undefined {
  const text = name.toLowerCase();
  // Longest ids first, so "h100-80gb" is not taken for a shorter id that its name also contains.
  const ids = Object.keys(DEVICE_PRESETS)
    .filter((id) => id !== 'cpu-core')
    .sort((a, b) => b.length - a.length);
  return ids.find((id) => id.split('-').every((token) => new RegExp(`(^|[^a-z0-9])${token}([^a-z0-9]|$)`).test(text.replace(/-/g, ' '))));
}

export function storedClusterSpec(cluster: StoredCluster, facts: Record<string, HostDevices | undefined>): { spec: ClusterSpec; assumed: string[] } {
  if (cluster.hosts.length === 0) throw new Error(`Cluster ${cluster.name} has no hosts: add some in Clusters.`);
  const assumed: string[] = [];
  const untested = cluster.hosts.filter((h) => !facts[h.alias]).map((h) => h.alias);
  if (untested.length) assumed.push(`${untested.join(', ')} not measured by a passing test: 1 CPU core each`);
  const hosts = cluster.hosts.map((h) => {
    const found = facts[h.alias];
    const presets = (found?.gpus ?? []).map(gpuPreset);
    const unknown = (found?.gpus ?? []).filter((_, i) => !presets[i]);
    if (unknown.length) assumed.push(`${h.alias}: no datasheet for ${unknown[0]}, priced on its CPU cores`);
    const gpus = presets.filter((p): p is string => !!p);
    const counts = new Map<string, number>();
    for (const p of gpus) counts.set(p, (counts.get(p) ?? 0) + 1);
    const devices = gpus.length ? [...counts].map(([preset, count]) => ({ preset, count })) : [{ preset: 'cpu-core', count: Math.max(1, found?.cpus ?? 1) }];
    return { name: h.alias, devices, intraLink: LOOPBACK };
  });
  if (!cluster.links && hosts.length > 1) assumed.push('links between hosts not measured: 1 Gb/s Ethernet');
  const spec = parseClusterSpec({ name: cluster.name, hosts, links: hosts.length > 1 ? { interHost: ETHERNET } : {} });
  if (!cluster.links || hosts.length < 2) return { spec, assumed };
  try {
    return { spec: withMeasuredLinks(spec, cluster.links), assumed };
  } catch {
    // The survey measured other hosts than the cluster has now (a host was renamed): datasheet links.
    assumed.push('the measured links are of other hosts: 1 Gb/s Ethernet');
    return { spec, assumed };
  }
}
