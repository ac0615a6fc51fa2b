import type { LogLine } from '../store/metrics';

/** Which log lines to show: by host, by rank ('none' = lines of no rank, the coordinator's), by lowest level. */
export interface LogFilter {
  host: string | null;
  rank: number | 'none' | null;
  level: LogLine['level'];
}

export const NO_FILTER: LogFilter = { host: null, rank: null, level: 'info' };
const SEVERITY: Record<LogLine['level'], number> = { info: 0, warn: 1, error: 2 };

export function filterLogs(lines: LogLine[], filter: LogFilter): LogLine[] {
  if (filter.host === null && filter.rank === null && filter.level === 'info') return lines;
  return lines.filter(
    (l) =>
      (filter.host === null || l.host === filter.host) &&
      (filter.rank === null || (filter.rank === 'none' ? l.rank === null : l.rank === filter.rank)) &&
      SEVERITY[l.level] >= SEVERITY[filter.level],
  );
}

/** The hosts and ranks the lines mention, sorted, for the filter's choices. */
export function logSources(lines: LogLine[]): { hosts: string[]; ranks: number[] } {
  const hosts = new Set<string>();
  const ranks = new Set<number>();
  for (const l of lines) {
    hosts.add(l.host);
    if (l.rank !== null) ranks.add(l.rank);
  }
  return { hosts: [...hosts].sort(), ranks: [...ranks].sort((a, b) => a - b) };
}
