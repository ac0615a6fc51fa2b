import { measuredLink, type ClusterLinkProfile, type MeasuredLink } from './linkProfile.js';

/**
 * A link profile as a host × host matrix, for the CLI's table and the studio's Clusters view: row and
 * column i are the i-th surveyed host; the diagonal and unmeasured pairs are null.
 */
export function linkMatrix(profile: ClusterLinkProfile): { hosts: string[]; cells: Array<Array<MeasuredLink | null>> } {
  const hosts = profile.hosts;
  return { hosts, cells: hosts.map((a) => hosts.map((b) => (a === b ? null : (measuredLink(profile, a, b) ?? null)))) };
}

/** Bytes per second as GB/s (decimal, as link speeds are quoted), or MB/s below 1 GB/s. */
export function formatBandwidth(bytesPerSec: number): string {
  return bytesPerSec >= 1e9 ? `${(bytesPerSec / 1e9).toFixed(2)} GB/s` : `${(bytesPerSec / 1e6).toFixed(1)} MB/s`;
}

/** Seconds as µs below a millisecond, else ms. */
export function formatLatency(seconds: number): string {
  return seconds < 1e-3 ? `${(seconds * 1e6).toFixed(0)} µs` : `${(seconds * 1e3).toFixed(2)} ms`;
}

/** The matrix as fixed-width text: each cell `bandwidth / latency`, `—` on the diagonal, `?` when not measured. */
export function formatLinkMatrix(profile: ClusterLinkProfile): string {
  const { hosts, cells } = linkMatrix(profile);
  const text = cells.map((row, i) => row.map((c, j) => (i === j ? '—' : c ? `${formatBandwidth(c.beta)} / ${formatLatency(c.alpha)}` : '?')));
  const first = Math.max(...hosts.map((h) => h.length));
  const widths = hosts.map((h, j) => Math.max(h.length, ...text.map((row) => row[j].length)));
  const line = (label: string, values: string[]) => [label.padEnd(first), ...values.map((v, j) => v.padEnd(widths[j]))].join('  ').trimEnd();
  return [line('', hosts), ...hosts.map((h, i) => line(h, text[i]))].join('\n') + '\n';
}
