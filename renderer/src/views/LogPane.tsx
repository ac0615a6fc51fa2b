import { useEffect, useMemo, useRef, useState } from 'react';
import { filterLogs, logSources, NO_FILTER } from '../monitor/logFilter';
import { useStudio } from '../store/studioStore';
import { LogFilterBar } from './LogFilterBar';

/** The job's log lines, host and rank on each, newest at the bottom (follows unless scrolled up); filterable by host, rank and level. */
export function LogPane() {
  const all = useStudio((s) => s.job?.metrics.logs);
  const [filter, setFilter] = useState(NO_FILTER);
  const sources = useMemo(() => logSources(all ?? []), [all]);
  const logs = useMemo(() => (all ? filterLogs(all, filter) : all), [all, filter]);
  const list = useRef<HTMLOListElement>(null);
  const follow = useRef(true);
  useEffect(() => {
    const el = list.current;
    if (el && follow.current) el.scrollTop = el.scrollHeight;
  }, [logs]);
  return (
    <section className="panel logs" aria-label="Log">
      <div className="logs__head">
        <h2 className="panel__title">Log</h2>
        <LogFilterBar filter={filter} hosts={sources.hosts} ranks={sources.ranks} onChange={setFilter} />
      </div>
      <ol
        ref={list}
        className="logs__list"
        data-testid="log"
        tabIndex={0}
        onScroll={(e) => {
          const el = e.currentTarget;
          follow.current = el.scrollHeight - el.scrollTop - el.clientHeight < 24;
        }}
      >
        {(logs ?? []).map((line, i) => (
          <li key={i} className={`log log--${line.level}`} data-testid="log-line" data-rank={line.rank ?? ''} data-host={line.host}>
            <time>{new Date(line.time).toLocaleTimeString()}</time>
            <span className="log__where">
              {line.host}
              {line.rank !== null ? `/r${line.rank}` : ''}
            </span>
            <span className="log__message">{line.message}</span>
          </li>
        ))}
        {!logs?.length && <li className="muted">{all?.length ? 'No lines match the filter.' : 'No log lines yet.'}</li>}
      </ol>
    </section>
  );
}
