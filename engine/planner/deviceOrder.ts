import type { ClusterSpec } from '../cluster/spec.js';
import type { CostOptions } from '../cost/planCost.js';
import { deviceFlops } from '../cost/deviceSpeed.js';

/**
 * The cluster as the planner sees it: devices in the order it hands them out, so that consecutive
 * runs of devices share a host (tensor-parallel groups and, with blocked placement, data-parallel
 * groups stay on fast links), and hosts of the same speed sit together (a stage, or a replica, gets
 * devices of one kind, which VirtualFlow's per-speed virtual nodes can then balance).
 */
export interface DeviceView {
  order: number[];
  /** Sustained FLOP/s per device index. */
  speed: number[];
  memory: number[];
  /** Fewest devices on any host: the largest tensor-parallel group that fits inside every host. */
  hostSize: number;
  homogeneous: boolean;
}

export function deviceView(cluster: ClusterSpec, cost: CostOptions): DeviceView {
  const speed = cluster.devices.map((d) => deviceFlops(cluster, d.index, cost));
  const memory = cluster.devices.map((d) => d.memoryBytes);
  const hostSpeed = (h: number) => Math.min(...cluster.hosts[h].devices.map((d) => speed[d]));
  const hosts = cluster.hosts.map((_, h) => h).sort((a, b) => hostSpeed(b) - hostSpeed(a) || a - b);
  const order = hosts.flatMap((h) => cluster.hosts[h].devices);
  const homogeneous = speed.every((s) => s === speed[0]) && memory.every((m) => m === memory[0]);
  return { order, speed, memory, hostSize: Math.min(...cluster.hosts.map((h) => h.devices.length)), homogeneous };
}

/**
 * Devices of each stage, replica-major then shard (the Plan's `devices` layout), for `p` stages of
 * `d` replicas × `t` shards taken from `order`. Blocked: stage s takes the s-th run of d·t devices,
 * so a stage's data-parallel group shares hosts and the pipeline crosses hosts. Interleaved: each
 * replica's whole pipeline is one run of p·t devices, so the pipeline stays inside a host and the
 * data-parallel all-reduce crosses hosts.
 */
export function placeStages(order: number[], p: number, d: number, t: number, placement: 'blocked' | 'interleaved'): number[][] {
  return Array.from({ length: p }, (_, s) => {
    const devices: number[] = [];
    for (let r = 0; r < d; r++) {
      for (let k = 0; k < t; k++) {
        const slot = placement === 'blocked' ? (s * d + r) * t + k : (r * p + s) * t + k;
        devices.push(order[slot]);
      }
    }
    return devices;
  });
}
