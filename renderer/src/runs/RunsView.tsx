import { useEffect } from 'react';
import { openOverlay } from '../shell/shellStore';
import { RunCompare } from './RunCompare';
import { RunDetailView } from './RunDetailView';
import { RunsTable } from './RunsTable';
import { refreshRuns, useRuns } from './runsStore';
import './runs.css';

/** Runs: every run kept on disk in a sortable, filterable table; open one, or tick several to compare them. */
export function RunsView() {
  const runs = useRuns((s) => s.runs);
  const loading = useRuns((s) => s.loading);
  const error = useRuns((s) => s.error);
  const message = useRuns((s) => s.message);
  const opened = useRuns((s) => s.opened);
  const compare = useRuns((s) => s.compare);
  useEffect(() => {
    void refreshRuns();
  }, []);
  return (
    <div className="overlay" role="dialog" aria-modal="true" aria-label="Runs" data-testid="runs-view">
      <div className="overlay__panel">
        <header className="overlay__header">
          <h2>Runs</h2>
          <span className="muted">Every training run is kept on disk with its curves and checkpoints. Click a run to open it; tick two or more to compare them.</span>
          <button type="button" className="button button--quiet" onClick={() => void refreshRuns()} disabled={loading}>
            {loading ? 'Refreshing…' : 'Refresh'}
          </button>
          <button type="button" className="button button--quiet" onClick={() => openOverlay(undefined)} aria-label="Close runs" data-testid="close-overlay">
            ✕
          </button>
        </header>
        {error && (
          <p className="error-text overlay__message" role="alert">
            {error}
          </p>
        )}
        {message && (
          <p className="overlay__message" data-testid="runs-message">
            {message}
          </p>
        )}
        <div className="runs runs--table">
          {runs.length === 0 && !loading ? (
            <div className="empty-state" data-testid="runs-empty">
              <strong>No runs yet.</strong>
              <span>Pick a model and a plan, then press Train: the run, its curves and its checkpoints appear here, and stay after the studio closes.</span>
            </div>
          ) : (
            <RunsTable />
          )}
          <div className="runs__detail">
            {compare.length >= 2 ? (
              <RunCompare ids={compare} />
            ) : opened ? (
              <RunDetailView id={opened} />
            ) : (
              runs.length > 0 && (
                <div className="empty-state">
                  <strong>Open a run</strong>
                  <span>Click a run to see its curves, name and tag it, export its metrics (CSV, JSON) or weights, or delete it. Tick two or more runs to overlay their curves and list every field in which they differ.</span>
                </div>
              )
            )}
          </div>
        </div>
      </div>
    </div>
  );
}
