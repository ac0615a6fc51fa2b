import { useMemo } from 'react';
import { OverlayChart } from './OverlayChart';
import { runDifferences } from '../../../engine/plan/planDiff';
import { StepTimeTable } from './RunDetailView';
import { runLabel } from './runsTableModel';
import { useRuns } from './runsStore';

const PALETTE = ['#4cc9f0', '#f72585', '#80ed99', '#ffd166', '#b388ff', '#ff9f1c', '#2ec4b6', '#e76f51'];

/** A colour per run: the palette first, then hues spread round the wheel for more runs. */
export function runColor(i: number): string {
  return i < PALETTE.length ? PALETTE[i] : `hsl(${Math.round((i * 137.5) % 360)} 70% 60%)`;
}

/** Any number of runs: curves overlaid, every field in which they differ, predicted vs measured step time. */
export function RunCompare({ ids }: { ids: string[] }) {
  const details = useRuns((s) => s.details);
  const runs = useMemo(() => ids.map((id) => details[id]), [ids, details]);
  const ready = runs.every(Boolean);
  const labelled = useMemo(() => (ready ? runs.map((d, i) => ({ d: d!, label: runLabel(d!.summary), color: runColor(i), id: ids[i] })) : []), [ready, runs, ids]);
  const loss = useMemo(() => labelled.map(({ d, label, color, id }) => ({ key: id, label, color, x: d.curves.step, y: d.curves.loss })), [labelled]);
  const throughput = useMemo(() => labelled.map(({ d, label, color, id }) => ({ key: id, label, color, x: d.curves.step, y: d.curves.samplesPerSec })), [labelled]);
  const accuracy = useMemo(() => labelled.map(({ d, label, color, id }) => ({ key: id, label, color, x: d.evals.map((e) => e.step), y: d.evals.map((e) => (e.validationAccuracy ?? NaN) * 100) })), [labelled]);
  const diff = useMemo(() => (ready ? runDifferences(runs.map((d) => d!)) : []), [ready, runs]);
  if (!ready) return <div className="empty">Loading the {ids.length} runs…</div>;
  return (
    <section className="run-detail" data-testid="run-compare" data-runs={ids.length}>
      <h3 className="run-detail__title">Comparing {ids.length} runs</h3>
      <div className="run-detail__charts">
        <OverlayChart title="Loss" testId="compare-loss" series={loss} xLabel="step" yLabel="loss" />
        <OverlayChart title="Throughput" testId="compare-throughput" series={throughput} xLabel="step" yLabel="samples/s" />
        <OverlayChart title="Validation accuracy" testId="compare-accuracy" series={accuracy} xLabel="step" yLabel="%" />
      </div>
      <h4 className="panel__title">What differs</h4>
      {diff.length === 0 ? (
        <p className="muted" data-testid="plan-diff">
          The runs have the same plan, data and results.
        </p>
      ) : (
        <div className="runs-diff">
          <table className="runs-table" data-testid="plan-diff">
            <thead>
              <tr>
                <th>Field</th>
                {labelled.map(({ label, color, id }) => (
                  <th key={id} title={id}>
                    <span className="run-swatch" style={{ background: color }} aria-hidden="true" /> {label}
                  </th>
                ))}
              </tr>
            </thead>
            <tbody>
              {diff.map((d) => (
                <tr key={d.path} data-testid="diff-row" data-path={d.path}>
                  <td>
                    <code>{d.path}</code>
                  </td>
                  {d.values.map((v, i) => (
                    <td key={i}>{v}</td>
                  ))}
                </tr>
              ))}
            </tbody>
          </table>
        </div>
      )}
      <h4 className="panel__title">Step time</h4>
      <StepTimeTable runs={labelled.map(({ d, label }) => ({ label, detail: d }))} />
    </section>
  );
}
