import { z } from 'zod';

/**
 * What a link survey (`shoal cluster test`) measured between the hosts of an SSH cluster: one agent per
 * host, every pair probed over the agents' own framed TCP links, exactly as a job's links are probed
 * before its first step (agents/runtime/probeLinks.ts). Stored per cluster in the user's config
 * directory (engine/node/hosts/clusterProfile.ts) and turned into the cost model's host-pair links by
 * withMeasuredLinks (measuredLinks.ts). Hosts are named by their alias in clusters.json.
 */
export const MeasuredLinkSchema = z.strictObject({
  /** The host that led the probe (it sent, the other echoed). */
  from: z.string().min(1),
  to: z.string().min(1),
  /** One-way latency in seconds: half the smallest round trip of an 8-byte message. */
  alpha: z.number().nonnegative(),
  /** Bytes per second of a large message (its smallest round trip less 2α). */
  beta: z.number().positive(),
  /** The smallest round trip of the small message, ms. */
  rttMs: z.number().nonnegative(),
  /** When this pair was measured, when earlier than the profile's survey (a later partial survey kept it). */
  measuredAt: z.string().min(1).optional(),
});
export type MeasuredLink = z.infer<typeof MeasuredLinkSchema>;

export const ClusterLinkProfileSchema = z.strictObject({
  version: z.literal(1),
  cluster: z.string().min(1),
  /** ISO time the survey finished. */
  measuredAt: z.string().min(1),
  /** Aliases of the hosts that took part, head first. */
  hosts: z.array(z.string().min(1)).min(2),
  /** One entry per pair of hosts (unordered: the lower rank of the pair leads the probe). */
  links: z.array(MeasuredLinkSchema),
  /** Hosts of the cluster that were not surveyed, and why (failed preflight or upload). */
  leftOut: z.array(z.strictObject({ host: z.string(), reason: z.string() })).default([]),
  /** How the probe was run: round trips of the small and the large message, and the large one's size. */
  probe: z.strictObject({ smallRounds: z.number().int().min(1), largeRounds: z.number().int().min(1), largeBytes: z.number().int().min(1) }).optional(),
});
export type ClusterLinkProfile = z.infer<typeof ClusterLinkProfileSchema>;

/** The measured link between two hosts in either direction, or undefined when the pair was not surveyed. */
export function measuredLink(profile: ClusterLinkProfile, a: string, b: string): MeasuredLink | undefined {
  return profile.links.find((l) => (l.from === a && l.to === b) || (l.from === b && l.to === a));
}
