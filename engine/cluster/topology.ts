import type { ClusterSpec, Device, Link } from './spec.js';

/** Every device in global-index order, or only those of one host. */
export function devicesOf(spec: ClusterSpec, host?: string): Device[] {
  return host === undefined ? spec.devices : spec.devices.filter((d) => d.host === host);
}

/** A device talking to itself: no latency, no bandwidth limit (a copy in its own memory). */
const SAME_DEVICE: Link = { alpha: 0, beta: Infinity };

/**
 * The α-β link between two devices: none for a device and itself, the host's intra link inside a
 * host, otherwise a host-pair override if there is one, else the cluster's inter-host link.
 */
export function linkBetween(spec: ClusterSpec, a: number, b: number): Link {
  const da = deviceAt(spec, a);
  const db = deviceAt(spec, b);
  if (a === b) return SAME_DEVICE;
  if (da.hostIndex === db.hostIndex) {
    const link = spec.hosts[da.hostIndex].intraLink;
    // parseClusterSpec guarantees a link for every host with two or more devices.
    if (!link) throw new Error(`Host "${da.host}" has no intra-host link.`);
    return link;
  }
  const pair = spec.hostPairs.find((p) => (p.hosts[0] === da.host && p.hosts[1] === db.host) || (p.hosts[0] === db.host && p.hosts[1] === da.host));
  if (pair) return pair.link;
  if (!spec.interHost) throw new Error(`Cluster "${spec.name}" has no inter-host link.`);
  return spec.interHost;
}

function deviceAt(spec: ClusterSpec, index: number): Device {
  const device = spec.devices[index];
  if (!device) throw new Error(`Cluster "${spec.name}" has devices 0–${spec.devices.length - 1}; there is no device ${index}.`);
  return device;
}
