import { useEffect } from 'react';
import { openOverlay } from '../shell/shellStore';
import { RunCompare } from './RunCompare';
import { RunDetailView } from './RunDetailView';
import { openRun, refreshRuns, toggleCompare, useRuns } from './runsStore';

const pct = (x?: number) => (x === undefined ? '—' : `${(x * 100).toFixed(1)}%`);

/** Runs: every run kept on disk, newest first; open one, or tick two to compare them. */
export function RunsView() {
  const runs = useRuns((s) => s.runs);
  const loading = useRuns((s) => s.loading);
  const error = useRuns((s) => s.error);
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
          <span className="muted">Every training run is kept on disk with its curves and checkpoints. Click a run to open it; tick two to compare.</span>
          <button type="button" className="button button--quiet" onClick={() => void refreshRuns()} disabled={loading}>
            {loading ? 'Refreshing…' : 'Refresh'}
          </button>
          <button type="button" className="button button--quiet" onClick={() => openOverlay(undefined)} aria-label="Close runs" data-testid="close-overlay">
            ✕
          </button>
        </header>
        {error && <p className="error-text">{error}</p>}
        <div className="runs">
          <div className="runs__list">
            {runs.length === 0 && !loading ? (
              <div className="empty-state" data-testid="runs-empty">
                <strong>No runs yet.</strong>
                <span>Pick a model and a plan, then press Train: the run, its curves and its checkpoints appear here, and stay after the studio closes.</span>
              </div>
            ) : (
              <table className="runs-table runs-table--list" data-testid="runs-list">
                <thead>
                  <tr>
                    <th aria-label="Compare" />
                    <th>Run</th>
                    <th>Model</th>
                    <th>State</th>
                    <th>Steps</th>
                    <th>Accuracy</th>
                  </tr>
                </thead>
                <tbody>
                  {runs.map((run) => (
                    <tr key={run.id} className={run.id === opened ? 'is-selected' : undefined} data-testid="run-row" data-run={run.id} onClick={() => openRun(run.id)}>
                      <td onClick={(e) => e.stopPropagation()}>
                        <input type="checkbox" aria-label={`Compare ${run.id}`} checked={compare.includes(run.id)} onChange={() => toggleCompare(run.id)} />
                      </td>
                      <td title={run.planLabel}>
                        <div>{new Date(run.createdAt).toLocaleString()}</div>
                        <div className="muted runs__id">{run.id}</div>
                      </td>
                      <td>{run.model}</td>
                      <td className={`run-state run-state--${run.state}`}>{run.state}</td>
                      <td>
                        {run.stepsDone}/{run.steps}
                      </td>
                      <td>{pct(run.validationAccuracy)}</td>
                    </tr>
                  ))}
                </tbody>
              </table>
            )}
          </div>
          <div className="runs__detail">
            {compare.length === 2 ? (
              <RunCompare ids={[compare[0], compare[1]]} />
            ) : opened ? (
              <RunDetailView id={opened} />
            ) : (
              <div className="empty-state">
                <strong>Open a run</strong>
                <span>Click a run on the left to see its curves, its plan's predicted and measured step time, and to export its weights for tf.loadLayersModel. Tick two runs to overlay their curves and see how their plans differ.</span>
              </div>
            )}
          </div>
        </div>
      </div>
    </div>
  );
}
