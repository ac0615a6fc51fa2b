import { useEffect, useRef } from 'react';
import { useStudio } from '../store/studioStore';

/** The job's log lines, host and rank on each, newest at the bottom (follows unless scrolled up). */
export function LogPane() {
  const logs = useStudio((s) => s.job?.metrics.logs);
  const list = useRef<HTMLOListElement>(null);
  const follow = useRef(true);
  useEffect(() => {
    const el = list.current;
    if (el && follow.current) el.scrollTop = el.scrollHeight;
  }, [logs]);
  return (
    <section className="panel logs" aria-label="Log">
      <h2 className="panel__title">Log</h2>
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
          <li key={i} className={`log log--${line.level}`}>
            <time>{new Date(line.time).toLocaleTimeString()}</time>
            <span className="log__where">
              {line.host}
              {line.rank !== null ? `/r${line.rank}` : ''}
            </span>
            <span className="log__message">{line.message}</span>
          </li>
        ))}
        {!logs?.length && <li className="muted">No log lines yet.</li>}
      </ol>
    </section>
  );
}
