import { useEffect, useRef, useState } from 'react';
import type { RunSummary } from '../../../engine/protocol/runs';
import { downloadRunMetrics } from './runExport';
import { runLabel } from './runsTableModel';
import { deleteRun } from './runsStore';

/** A run's metrics as CSV or JSON, and deleting the run after a confirmation that says where its folder goes. */
export function RunActions({ run }: { run: RunSummary }) {
  const [confirming, setConfirming] = useState(false);
  const [busy, setBusy] = useState(false);
  const [refusal, setRefusal] = useState<string>();
  const cancel = useRef<HTMLButtonElement>(null);
  useEffect(() => {
    setConfirming(false);
    setRefusal(undefined);
  }, [run.id]);
  useEffect(() => {
    if (confirming) cancel.current?.focus();
  }, [confirming]);
  const running = run.state === 'running' || run.state === 'starting';
  const remove = async (permanently: boolean) => {
    setBusy(true);
    const refused = await deleteRun(run.id, permanently);
    setBusy(false);
    setRefusal(refused);
    if (refused) setConfirming(false);
  };
  return (
    <div className="run-actions" data-testid="run-actions">
      <button type="button" className="button button--quiet" onClick={() => void downloadRunMetrics(run.id, 'csv')} data-testid="run-export-csv" title="Every step's loss, epoch, throughput and step time, with the validation results on the evaluated steps">
        Export CSV
      </button>
      <button type="button" className="button button--quiet" onClick={() => void downloadRunMetrics(run.id, 'json')} data-testid="run-export-json" title="The run's summary, plan, curves, evaluations and final result">
        Export JSON
      </button>
      <button
        type="button"
        className="button button--danger"
        onClick={() => setConfirming(true)}
        disabled={running}
        title={running ? 'The run is still going: stop it before deleting it.' : 'Delete this run (asks first)'}
        data-testid="run-delete"
      >
        Delete…
      </button>
      {running && <span className="muted">Stop the run to delete it.</span>}
      {refusal && (
        <span className="error-text" role="alert" data-testid="run-delete-error">
          {refusal}
        </span>
      )}
      {confirming && (
        <div
          className="run-confirm"
          role="alertdialog"
          aria-modal="true"
          aria-labelledby="run-confirm-title"
          data-testid="run-delete-confirm"
          onKeyDown={(e) => {
            // Escape answers this question only, leaving the Runs view open.
            if (e.key === 'Escape') {
              e.stopPropagation();
              e.nativeEvent.stopImmediatePropagation();
              setConfirming(false);
            }
          }}
        >
          <p id="run-confirm-title">
            <strong>Delete run {runLabel(run)}?</strong> Its folder, with its checkpoints and history, moves to Shoal&apos;s trash (the <code>trash/runs</code> folder beside the runs folder), or is removed for good.
          </p>
          <div className="run-confirm__buttons">
            <button type="button" className="button button--danger" disabled={busy} onClick={() => void remove(false)} data-testid="run-delete-trash">
              Move to trash
            </button>
            <button type="button" className="button button--danger" disabled={busy} onClick={() => void remove(true)} data-testid="run-delete-permanently">
              Delete permanently
            </button>
            <button type="button" className="button" ref={cancel} disabled={busy} onClick={() => setConfirming(false)} data-testid="run-delete-cancel">
              Cancel
            </button>
          </div>
        </div>
      )}
    </div>
  );
}
