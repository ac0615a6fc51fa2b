import { agentsNeeded } from '../../../engine/plan/plan';
import { setPreset } from '../store/actions';
import { CLUSTER_CHOICES, clusterLabel, storedAssumptions, storedChoices } from '../store/clusters';
import { useClusters } from '../clusters/clustersStore';
import type { ClusterChoice } from '../store/clusters';
import { isActive } from '../store/metrics';
import { usePlan } from '../store/planState';
import { PRESETS, useStudio } from '../store/studioStore';
import type { PresetName } from '../store/studioStore';
import { DataSection } from './DataSection';
import { DiagnosticList } from './DiagnosticList';
import { NumberField } from './NumberField';
import { PlanSettings } from './PlanSettings';
import { Prediction } from './Prediction';
import { StageTable } from './StageTable';

const PRESET_LABELS: Record<PresetName, string> = {
  'pp1-dp1': 'One process',
  'pp2-dp1': '2 pipeline stages',
  'pp2-dp2': '2 stages × 2 replicas',
  'pp2-dp2-m8': '2 stages × 2 replicas, 8 micro-batches',
};

/** The plan: where it starts (preset, cluster), what it trains on, its stages and settings, the prediction and diagnostics. */
export function PlanPanel() {
  const preset = useStudio((s) => s.preset);
  const cluster = useStudio((s) => s.cluster);
  const agents = useStudio((s) => s.agents);
  const epochs = useStudio((s) => s.epochs);
  const set = useStudio((s) => s.set);
  const busy = useStudio((s) => !!s.job && isActive(s.job.metrics.state));
  // Stored SSH clusters join the picker (the Clusters store keeps their specs current).
  useClusters((s) => s.listing);
  useClusters((s) => s.lastTests);
  const stored = storedChoices();
  const state = usePlan();
  const { plan, diagnostics, cost } = state;
  return (
    <section className="panel plan" aria-label="Plan">
      <h2 className="panel__title">Plan</h2>
      <div className="field">
        <label className="field__label" htmlFor="cluster-picker">
          Cluster
        </label>
        <select id="cluster-picker" data-testid="cluster-picker" value={cluster} onChange={(e) => set({ cluster: e.target.value as ClusterChoice })}>
          {CLUSTER_CHOICES.map((c) => (
            <option key={c} value={c}>
              {clusterLabel(c, agents)}
            </option>
          ))}
          {stored.length > 0 && (
            <optgroup label="Stored clusters (priced; deploy to train)">
              {stored.map((c) => (
                <option key={c} value={c}>
                  {clusterLabel(c, agents)}
                </option>
              ))}
            </optgroup>
          )}
          {cluster.startsWith('ssh:') && !stored.includes(cluster) && <option value={cluster}>{clusterLabel(cluster, agents)}</option>}
        </select>
        {storedAssumptions(cluster).length > 0 && (
          <span className="muted" data-testid="cluster-assumed">
            Assumed: {storedAssumptions(cluster).join('; ')}.
          </span>
        )}
      </div>
      <div className="field-row field-row--3">
        <div className="field">
          <label className="field__label" htmlFor="preset-picker">
            Preset
          </label>
          <select id="preset-picker" data-testid="preset-picker" value={preset} disabled={busy} title={PRESET_LABELS[preset]} onChange={(e) => setPreset(e.target.value as PresetName)}>
            {PRESETS.map((p) => (
              <option key={p} value={p} title={PRESET_LABELS[p]}>
                {p}
              </option>
            ))}
          </select>
        </div>
        <NumberField label="Agents" testId="agents-input" value={agents} min={1} max={64} disabled={busy || cluster !== 'local'} onChange={(v) => set({ agents: v })} />
        <NumberField label="Epochs" testId="epochs-input" value={epochs} min={0.01} max={1000} step={1} integer={false} disabled={busy} onChange={(v) => set({ epochs: v })} />
      </div>
      <DataSection />
      {plan && (
        <>
          <StageTable state={state} />
          <div className="plan__summary muted">
            {plan.stages.length} stage{plan.stages.length > 1 ? 's' : ''} · {agentsNeeded(plan)} agents needed · {plan.optimizer.kind} lr {plan.optimizer.learningRate}
          </div>
          <PlanSettings state={state} />
        </>
      )}
      {cost && <Prediction cost={cost} pricedOnAgents={state.pricedOnAgents} />}
      <DiagnosticList diagnostics={diagnostics} hasPlan={!!plan} />
    </section>
  );
}
