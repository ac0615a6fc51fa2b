import { useEffect, useState } from 'react';
import { resizeJob } from '../store/actions';
import { resizeBlocked } from '../store/resizeState';
import type { JobView } from '../store/studioStore';

/** Add an agent (this machine, or a deployed job's least-loaded host), or release one rank, at the running job's next step boundary. */
export function ResizeControls({ job }: { job: JobView | undefined }) {
  const generation = job?.metrics.membership?.generation;
  const ranks = job?.metrics.membership?.agents.map((a) => a.rank) ?? [];
  // The generation a request was made in: the controls wait until a newer one arrives.
  const [requestedIn, setRequestedIn] = useState<number | undefined>();
  const [rank, setRank] = useState<number | undefined>();
  const waiting = requestedIn !== undefined && generation === requestedIn && job?.metrics.state === 'running';
  useEffect(() => {
    if (requestedIn !== undefined && generation !== requestedIn) setRequestedIn(undefined);
  }, [generation, requestedIn]);
  const why = resizeBlocked(job, waiting);
  const chosen = rank !== undefined && ranks.includes(rank) ? rank : ranks[ranks.length - 1];
  const request = async (r: { add?: number; remove?: number[] }) => {
    setRequestedIn(generation);
    if (!(await resizeJob(r))) setRequestedIn(undefined);
  };
  return (
    <div className="resize">
      <div className="resize__controls">
        <button type="button" className="button" data-testid="add-agent-button" disabled={!!why} title={why ?? 'Start one more agent: on this machine, or on a deployed job\'s host with the fewest agents'} onClick={() => void request({ add: 1 })}>
          Add agent
        </button>
        <select aria-label="Rank to remove" data-testid="remove-rank-select" value={chosen ?? ''} disabled={!!why || ranks.length < 2} onChange={(e) => setRank(Number(e.target.value))}>
          {ranks.map((r) => (
            <option key={r} value={r}>
              rank {r}
            </option>
          ))}
        </select>
        <button
          type="button"
          className="button"
          data-testid="remove-rank-button"
          disabled={!!why || ranks.length < 2 || chosen === undefined}
          title={why ?? (ranks.length < 2 ? 'The last agent cannot be removed; stop the job instead.' : `Release rank ${chosen}`)}
          onClick={() => void request({ remove: [chosen!] })}
        >
          Remove
        </button>
      </div>
      {why && (
        <div className="muted resize__why" data-testid="resize-why">
          {why}
        </div>
      )}
    </div>
  );
}
