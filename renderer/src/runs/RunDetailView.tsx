import { useMemo } from 'react';
import type { RunDetail } from '../../../engine/protocol/runs';
import { LineChart, jobMarkers } from '../charts/LineChart';
import { formatBytes, formatDuration, formatMetric, formatNumber, formatPercent } from '../format';
import { RunActions } from './RunActions';
import { RunMetaEditor } from './RunMetaEditor';
import { runLabel } from './runsTableModel';
import { downloadRunWeights, exportRunWeights, useRuns } from './runsStore';
import { ValidationPanel } from './ValidationPanel';

const pct = (x: number) => formatPercent(x);
const ms = (x?: number) => (x === undefined ? '—' : formatDuration(x));

/** Predicted (datasheet, calibrated) vs measured step time, with the error of each prediction. */
export function StepTimeTable({ runs }: { runs: Array<{ label: string; detail: RunDetail }> }) {
  const error = (predicted?: number, measured?: number) => (predicted === undefined || !measured ? '' : ` (${predicted >= measured ? '+' : ''}${(((predicted - measured) / measured) * 100).toFixed(0)}%)`);
  return (
    <table className="runs-table" data-testid="step-time-table">
      <thead>
        <tr>
          <th>Run</th>
          <th>Predicted</th>
          <th>Calibrated</th>
          <th>Measured (median)</th>
        </tr>
      </thead>
      <tbody>
        {runs.map(({ label, detail }, i) => (
          <tr key={i}>
            <td>{label}</td>
            <td>
              {ms(detail.predictedStepMs)}
              <span className="muted">{error(detail.predictedStepMs, detail.measuredStepMs)}</span>
            </td>
            <td>
              {ms(detail.calibratedStepMs)}
              <span className="muted">{error(detail.calibratedStepMs, detail.measuredStepMs)}</span>
            </td>
            <td data-testid="measured-step-ms">{ms(detail.measuredStepMs)}</td>
          </tr>
        ))}
      </tbody>
    </table>
  );
}

function ExportControls({ id }: { id: string }) {
  const state = useRuns((s) => s.exports[id]);
  const detail = useRuns((s) => s.details[id]);
  const canExport = (detail?.summary.checkpoints ?? 0) > 0;
  return (
    <div className="run-export" data-testid="run-export">
      <button type="button" className="button" disabled={!canExport || state === 'busy'} onClick={() => void exportRunWeights(id)} data-testid="export-weights">
        {state === 'busy' ? 'Exporting…' : 'Export weights (tfjs)'}
      </button>
      {!canExport && <span className="muted">This run has no checkpoint to export (it stopped before its first save).</span>}
      {state && state !== 'busy' && 'error' in state && <span className="error-text">{state.error}</span>}
      {state && state !== 'busy' && 'dir' in state && (
        <>
          <span data-testid="export-result">
            model.json + weights ({formatBytes(state.bytes)}, step {state.step}) in <code>{state.dir}</code>
          </span>
          <button type="button" className="button button--quiet" onClick={() => void downloadRunWeights(id)} data-testid="download-weights">
            Download
          </button>
        </>
      )}
    </div>
  );
}

/** One past run: its loss, throughput and accuracy curves, its validation result and data, and predicted vs measured step time. */
export function RunDetailView({ id }: { id: string }) {
  const detail = useRuns((s) => s.details[id]);
  const evalX = useMemo(() => detail?.evals.map((e) => e.step) ?? [], [detail]);
  const evalY = useMemo(() => detail?.evals.map((e) => (e.validationAccuracy ?? NaN) * 100) ?? [], [detail]);
  const markers = useMemo(() => detail?.membership.filter((m) => m.generation > 0).map((m) => ({ step: m.step, label: `${m.reason}: ${m.agents} agents` })) ?? [], [detail]);
  if (!detail) return <div className="empty">Loading run {id}…</div>;
  const { summary, curves, final } = detail;
  return (
    <section className="run-detail" data-testid="run-detail" data-run={id}>
      <h3 className="run-detail__title" data-testid="run-title">
        {runLabel(summary)} <span className="muted">· {summary.model} · {summary.planLabel}</span>
      </h3>
      <RunActions run={summary} />
      <RunMetaEditor run={summary} />
      {/* Every column of the Runs table, those a narrow table leaves out included. */}
      <p className="muted" data-testid="run-facts">
        {new Date(summary.createdAt).toLocaleString()} · data {summary.dataset ?? detail.dataset?.name ?? 'mnist'} · {summary.agents} agent{summary.agents === 1 ? '' : 's'} on {summary.hosts.join(', ')} · {summary.stepsDone} of {summary.steps} steps · {summary.state}
        {summary.durationMs !== undefined && ` · took ${formatDuration(summary.durationMs)}`}
        {summary.finalLoss !== undefined && ` · final loss ${formatNumber(summary.finalLoss)}`}
        {final && ` · ${final.validationAccuracy === undefined ? `validation loss ${formatMetric('loss', final.validationLoss)}` : `validation accuracy ${pct(final.validationAccuracy)}`} in ${formatDuration(final.seconds * 1000)} on ${final.backends.join(', ')}`}
      </p>
      {detail.message && <p className="error-text">{detail.message}</p>}
      {!summary.hasHistory && <p className="muted">This run was recorded before Shoal kept event histories: only its plan and checkpoints are on disk.</p>}
      <div className="run-detail__charts">
        <LineChart title="Loss" testId="run-loss" x={curves.step} y={curves.loss} xLabel="step" yLabel="loss" color="#4cc9f0" markers={jobMarkers({ markers, evalSteps: evalX })} />
        <LineChart title="Throughput" testId="run-throughput" x={curves.step} y={curves.samplesPerSec} xLabel="step" yLabel="samples/s" color="#80ed99" quantity="perSecond" markers={markers} />
        <LineChart title="Validation accuracy" testId="run-accuracy" x={evalX} y={evalY} xLabel="step" yLabel="%" color="#ffd166" points quantity="percent" />
      </div>
      <ValidationPanel detail={detail} />
      <StepTimeTable runs={[{ label: id, detail }]} />
      <ExportControls id={id} />
    </section>
  );
}
