import { useMemo } from 'react';
import { planDiff } from '../../../engine/plan/planDiff';
import { OverlayChart } from './OverlayChart';
import { StepTimeTable } from './RunDetailView';
import { useRuns } from './runsStore';

const COLORS = ['#4cc9f0', '#f72585'];

/** Two runs side by side: curves overlaid, what differs in their plans, predicted vs measured step time. */
export function RunCompare({ ids }: { ids: [string, string] }) {
  const a = useRuns((s) => s.details[ids[0]]);
  const b = useRuns((s) => s.details[ids[1]]);
  const pair = useMemo(() => (a && b ? [a, b] : undefined), [a, b]);
  const loss = useMemo(() => pair?.map((d, i) => ({ label: ids[i], color: COLORS[i], x: d.curves.step, y: d.curves.loss })) ?? [], [pair, ids]);
  const throughput = useMemo(() => pair?.map((d, i) => ({ label: ids[i], color: COLORS[i], x: d.curves.step, y: d.curves.samplesPerSec })) ?? [], [pair, ids]);
  const accuracy = useMemo(() => pair?.map((d, i) => ({ label: ids[i], color: COLORS[i], x: d.evals.map((e) => e.step), y: d.evals.map((e) => (e.validationAccuracy ?? NaN) * 100) })) ?? [], [pair, ids]);
  const diff = useMemo(() => (pair ? planDiff(pair[0].plan, pair[1].plan) : []), [pair]);
  if (!pair) return <div className="empty">Loading the two runs…</div>;
  return (
    <section className="run-detail" data-testid="run-compare">
      <h3 className="run-detail__title">
        <span style={{ color: COLORS[0] }}>{ids[0]}</span> vs <span style={{ color: COLORS[1] }}>{ids[1]}</span>
      </h3>
      <div className="run-detail__charts">
        <OverlayChart title="Loss" testId="compare-loss" series={loss} xLabel="step" yLabel="loss" />
        <OverlayChart title="Throughput" testId="compare-throughput" series={throughput} xLabel="step" yLabel="samples/s" />
        <OverlayChart title="Validation accuracy" testId="compare-accuracy" series={accuracy} xLabel="step" yLabel="%" />
      </div>
      <h4 className="panel__title">Plan differences</h4>
      {diff.length === 0 ? (
        <p className="muted" data-testid="plan-diff">
          The two runs used the same plan.
        </p>
      ) : (
        <table className="runs-table" data-testid="plan-diff">
          <thead>
            <tr>
              <th>Field</th>
              <th>{ids[0]}</th>
              <th>{ids[1]}</th>
            </tr>
          </thead>
          <tbody>
            {diff.map((d) => (
              <tr key={d.path}>
                <td>
                  <code>{d.path}</code>
                </td>
                <td>{d.left}</td>
                <td>{d.right}</td>
              </tr>
            ))}
          </tbody>
        </table>
      )}
      <h4 className="panel__title">Step time</h4>
      <StepTimeTable runs={pair.map((detail, i) => ({ label: ids[i], detail }))} />
    </section>
  );
}
