import { agentsNeeded } from '../../../engine/plan/plan';
import { setPreset } from '../store/actions';
import { isActive } from '../store/metrics';
import { usePlan } from '../store/planState';
import { PRESETS, useStudio } from '../store/studioStore';
import type { PresetName } from '../store/studioStore';
import { stageColor } from '../graph/stageColors';
import { NumberField } from './NumberField';
import { Prediction } from './Prediction';

const PRESET_LABELS: Record<PresetName, string> = {
  'pp1-dp1': 'pp1-dp1 — one process',
  'pp2-dp1': 'pp2-dp1 — 2 pipeline stages',
  'pp2-dp2': 'pp2-dp2 — 2 stages × 2 replicas',
  'pp2-dp2-m8': 'pp2-dp2-m8 — as above, 8 micro-batches',
};

/** The plan: a preset, the agents and epochs to run it with, and the engine's diagnostics inline. */
export function PlanPanel() {
  const preset = useStudio((s) => s.preset);
  const agents = useStudio((s) => s.agents);
  const epochs = useStudio((s) => s.epochs);
  const set = useStudio((s) => s.set);
  const busy = useStudio((s) => !!s.job && isActive(s.job.metrics.state));
  const { plan, diagnostics, cost } = usePlan();
  return (
    <section className="panel plan" aria-label="Plan">
      <h2 className="panel__title">Plan</h2>
      <div className="field">
        <label className="field__label" htmlFor="preset-picker">
          Preset
        </label>
        <select id="preset-picker" data-testid="preset-picker" value={preset} disabled={busy} onChange={(e) => setPreset(e.target.value as PresetName)}>
          {PRESETS.map((p) => (
            <option key={p} value={p}>
              {PRESET_LABELS[p]}
            </option>
          ))}
        </select>
      </div>
      <div className="field-row">
        <NumberField label="Agents" testId="agents-input" value={agents} min={1} max={64} disabled={busy} onChange={(v) => set({ agents: v })} />
        <NumberField label="Epochs" testId="epochs-input" value={epochs} min={0.01} max={1000} step={1} integer={false} disabled={busy} onChange={(v) => set({ epochs: v })} />
      </div>
      {plan && (
        <dl className="plan__facts">
          <dt>Stages</dt>
          <dd>
            {plan.stages.map((stage, s) => (
              <span key={s} className="plan__stage" style={{ borderColor: stageColor(s) }}>
                {stage.layers.length} layers × {stage.dataParallel}
              </span>
            ))}
          </dd>
          <dt>Agents needed</dt>
          <dd>{agentsNeeded(plan)}</dd>
          <dt>Global batch</dt>
          <dd>
            {plan.globalBatch} in {plan.microBatches} micro-batch{plan.microBatches > 1 ? 'es' : ''}
          </dd>
          <dt>Schedule</dt>
          <dd>
            {plan.schedule} · {plan.optimizer.kind} lr {plan.optimizer.learningRate}
          </dd>
        </dl>
      )}
      {cost && <Prediction cost={cost} />}
      <ul className="diagnostics" data-testid="diagnostics" aria-live="polite">
        {diagnostics.map((d, i) => (
          <li key={i} className={`diagnostic diagnostic--${d.severity}`} data-code={d.code}>
            <strong>{d.message}</strong>
            <span>{d.hint}</span>
          </li>
        ))}
        {plan && diagnostics.length === 0 && <li className="diagnostic diagnostic--ok">Plan is valid.</li>}
      </ul>
    </section>
  );
}
