import { formatLinkMatrix } from '../../cluster/linkMatrix.js';
import type { ClusterLinkProfile } from '../../cluster/linkProfile.js';

/** A stored or fresh link survey as the CLI prints it: when, the host × host table, who was left out, where it is kept. */
export function linkReport(profile: ClusterLinkProfile, file: string): string {
  const lines = [`Links between hosts of ${profile.cluster}, measured ${profile.measuredAt} (bandwidth / one-way latency):`, formatLinkMatrix(profile).trimEnd()];
  for (const l of profile.leftOut) lines.push(`  left out: ${l.host} (${l.reason.split('\n')[0]})`);
  lines.push(`Stored in ${file}; the cost model uses them for these host pairs (withMeasuredLinks).`);
  return lines.join('\n') + '\n';
}
