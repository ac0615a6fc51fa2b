import { z } from 'zod';
import { LIMITS } from '../plan/limits.js';

/**
 * A cluster as JSON: hosts with their devices, and the links between devices. Links follow the α-β
 * model the cost model uses: a transfer of S bytes takes α + S/β, with α the latency in seconds and β
 * the bandwidth in bytes per second that one device sees when it is the only one using the link
 * (contention between devices sharing a NIC is the cost model's business, not the spec's).
 */

export const LinkSchema = z.strictObject({
  /** Latency in seconds, e.g. 5e-6 for NVLink, 2.5e-5 for TCP over Ethernet. */
  alpha: z.number().nonnegative(),
  /** Bandwidth in bytes per second, e.g. 4.375e9 for 35 Gb/s. */
  beta: z.number().positive(),
  /** Where the numbers come from; ignored by the engine. */
  note: z.string().optional(),
});

export const FlopsSchema = z.strictObject({
  /** Sustained FLOP/s in true fp32; the others only where the device has fast half precision. */
  fp32: z.number().positive().optional(),
  fp16: z.number().positive().optional(),
  bf16: z.number().positive().optional(),
});

/**
 * One kind of device on a host, `count` times. Either a preset (`{ "preset": "v100-16gb", "count": 8 }`)
 * whose fields may be overridden — e.g. by measured flops — or a full description (name, memoryBytes,
 * flops.fp32).
 */
export const DeviceEntrySchema = z.strictObject({
  preset: z.string().optional(),
  name: z.string().min(1).optional(),
  memoryBytes: z.number().positive().optional(),
  flops: FlopsSchema.optional(),
  count: z.number().int().min(1).max(LIMITS.devices).default(1),
});

export const HostEntrySchema = z.strictObject({
  name: z.string().min(1),
  /** How to reach the host (SSH address); absent for simulated clusters. */
  address: z.string().min(1).optional(),
  devices: z.array(DeviceEntrySchema).min(1).max(LIMITS.devices),
  /** Link between two devices of this host (NVLink, PCIe, loopback); defaults to links.intraHost. */
  intraLink: LinkSchema.optional(),
  note: z.string().optional(),
});

export const HostPairSchema = LinkSchema.extend({ hosts: z.tuple([z.string().min(1), z.string().min(1)]) });

export const ClusterSpecSchema = z.strictObject({
  name: z.string().min(1),
  hosts: z.array(HostEntrySchema).min(1).max(LIMITS.devices),
  links: z
    .strictObject({
      /** Default link inside a host, for hosts that do not give their own intraLink. */
      intraHost: LinkSchema.optional(),
      /** Link between devices on different hosts. */
      interHost: LinkSchema.optional(),
      /** Overrides of interHost for particular host pairs (e.g. two hosts on the same switch). */
      hostPairs: z.array(HostPairSchema).default([]),
    })
    .default({ hostPairs: [] }),
  note: z.string().optional(),
});

export interface Flops {
  fp32: number;
  fp16?: number;
  bf16?: number;
}

export interface Link {
  alpha: number;
  beta: number;
}

/** One device of the normalized cluster; `index` is its global index, which plans refer to. */
export interface Device {
  index: number;
  host: string;
  hostIndex: number;
  /** Device model, e.g. "Tesla V100-SXM2-16GB". */
  model: string;
  /** The preset it came from, if any. */
  preset?: string;
  memoryBytes: number;
  flops: Flops;
}

export interface Host {
  name: string;
  address?: string;
  /** Global indices of this host's devices, ascending. */
  devices: number[];
  /** Absent only for a host with a single device, which needs none. */
  intraLink?: Link;
}

/** A validated cluster: every device resolved, every link that a pair of devices can need present. */
export interface ClusterSpec {
  name: string;
  hosts: Host[];
  devices: Device[];
  /** Absent only for a single-host cluster. */
  interHost?: Link;
  hostPairs: { hosts: [string, string]; link: Link }[];
}
