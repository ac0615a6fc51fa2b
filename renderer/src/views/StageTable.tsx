import { useEffect, useState } from 'react';
import { applyEdit } from '../editor/editorStore';
import { setStageDegree } from '../editor/planEdits';
import type { StageDegree } from '../editor/planEdits';
import { formatBytes, formatMs } from '../format';
import { stageColor } from '../graph/stageColors';
import type { PlanState } from '../store/planState';
import { stagePredictions } from '../store/stagePredictions';

/** A compact whole-number input for a stage's degree; commits only valid values. */
function DegreeInput({ label, testId, value, onCommit }: { label: string; testId: string; value: number; onCommit(v: number): void }) {
  const [text, setText] = useState(String(value));
  useEffect(() => setText(String(value)), [value]);
  const parse = (t: string) => (/^\d+$/.test(t.trim()) && Number(t) >= 1 && Number(t) <= 1024 ? Number(t) : undefined);
  return (
    <input
      type="number"
      className="degree-input"
      aria-label={label}
      data-testid={testId}
      min={1}
      max={1024}
      value={text}
      aria-invalid={parse(text) === undefined}
      onChange={(e) => {
        setText(e.target.value);
        const v = parse(e.target.value);
        if (v !== undefined) onCommit(v);
      }}
      onBlur={() => parse(text) === undefined && setText(String(value))}
    />
  );
}

/** One row per pipeline stage: its degrees (editable) and what the cost model predicts for it. */
export function StageTable({ state }: { state: PlanState }) {
  const { plan, cost } = state;
  if (!plan) return null;
  const predictions = cost ? stagePredictions(cost) : [];
  const set = (s: number, field: StageDegree) => (v: number) => plan && applyEdit(setStageDegree(plan, s, field, v));
  return (
    <table className="stage-table" data-testid="stage-table">
      <thead>
        <tr>
          <th scope="col">Stage</th>
          <th scope="col" title="Data-parallel replicas">DP</th>
          <th scope="col" title="Tensor-parallel shards per replica">TP</th>
          <th scope="col">Time</th>
          <th scope="col" title="The stage's most loaded device against its capacity">Memory</th>
        </tr>
      </thead>
      <tbody>
        {plan.stages.map((stage, s) => {
          const p = predictions[s];
          const issues = state.byStage.get(s) ?? [];
          return (
            <tr key={s} data-testid="stage-row" data-stage={s}>
              <th scope="row">
                <span className="plan__stage" style={{ borderColor: stageColor(s) }} title={`${stage.layers.length} layers: ${stage.layers[0]} … ${stage.layers[stage.layers.length - 1]}`}>
                  {s}
                </span>
                {issues.length > 0 && (
                  <span className={`issue-dot issue-dot--${issues.some((d) => d.severity === 'error') ? 'error' : 'warning'}`} title={issues.map((d) => d.message).join('\n')}>
                    !
                  </span>
                )}
              </th>
              <td>
                <DegreeInput label={`Stage ${s} data-parallel degree`} testId={`stage-dp-${s}`} value={stage.dataParallel} onCommit={set(s, 'dataParallel')} />
              </td>
              <td>
                <DegreeInput label={`Stage ${s} tensor-parallel degree`} testId={`stage-tp-${s}`} value={stage.tensorParallel} onCommit={set(s, 'tensorParallel')} />
              </td>
              <td data-testid={`stage-time-${s}`}>{p ? formatMs(p.ms) : '—'}</td>
              <td data-testid={`stage-memory-${s}`} className={p && !p.fits ? 'stage-table__over' : ''} title={p ? `${formatBytes(p.memoryBytes)} of ${formatBytes(p.capacityBytes)} on the stage's most loaded device` : undefined}>
                {p ? (
                  <span className="mem">
                    <span className="mem__bar" aria-hidden="true">
                      <span className="mem__fill" style={{ width: `${Math.min(100, Math.max(2, (100 * p.memoryBytes) / p.capacityBytes))}%`, display: 'block' }} />
                    </span>
                    {formatBytes(p.memoryBytes)}
                    {!p.fits && ' !'}
                  </span>
                ) : (
                  '—'
                )}
              </td>
            </tr>
          );
        })}
      </tbody>
    </table>
  );
}
