import type { LogFilter } from '../monitor/logFilter';
import type { LogLine } from '../store/metrics';

/** Pickers for the log: one host, one rank (or the coordinator's lines), the lowest level shown. */
export function LogFilterBar({ filter, hosts, ranks, onChange }: { filter: LogFilter; hosts: string[]; ranks: number[]; onChange(filter: LogFilter): void }) {
  return (
    <div className="logs__filter">
      <select aria-label="Host" data-testid="log-host" value={filter.host ?? ''} onChange={(e) => onChange({ ...filter, host: e.target.value || null })}>
        <option value="">all hosts</option>
        {hosts.map((h) => (
          <option key={h} value={h}>
            {h}
          </option>
        ))}
      </select>
      <select
        aria-label="Rank"
        data-testid="log-rank"
        value={filter.rank === null ? '' : String(filter.rank)}
        onChange={(e) => onChange({ ...filter, rank: e.target.value === '' ? null : e.target.value === 'none' ? 'none' : Number(e.target.value) })}
      >
        <option value="">all ranks</option>
        <option value="none">no rank</option>
        {ranks.map((r) => (
          <option key={r} value={r}>
            rank {r}
          </option>
        ))}
      </select>
      <select aria-label="Level" data-testid="log-level" value={filter.level} onChange={(e) => onChange({ ...filter, level: e.target.value as LogLine['level'] })}>
        <option value="info">info and up</option>
        <option value="warn">warnings and errors</option>
        <option value="error">errors</option>
      </select>
    </div>
  );
}
