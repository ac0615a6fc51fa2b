import { executionSupport } from '../../../engine/plan/executionSupport';
import type { Plan } from '../../../engine/plan/plan';
import type { Suggestion } from '../../../engine/planner/suggestPlans';
import { loadPlan, setPreview } from '../editor/editorStore';
import { formatBytes, formatCount, formatMs, formatPercent } from '../format';
import { usePlanner } from '../planner/usePlanner';
import { clusterLabel, clusterSpec } from '../store/clusters';
import { useStudio } from '../store/studioStore';

/** "2 stages × DP 4 · 8 micro-batches · 1F1B · ZeRO 1": the shape of a plan in one line. */
export function planShape(plan: Plan): string {
  const s = plan.stages;
  const dp = [...new Set(s.map((x) => x.dataParallel))].join('/');
  const tp = Math.max(...s.map((x) => x.tensorParallel));
  const parts = [`${s.length} stage${s.length > 1 ? 's' : ''} × DP ${dp}${tp > 1 ? ` × TP ${tp}` : ''}`, `${plan.microBatches} micro-batch${plan.microBatches > 1 ? 'es' : ''}`, plan.schedule];
  if (plan.zero) parts.push(`ZeRO ${plan.zero}`);
  if (plan.virtualNodes) parts.push(`${plan.virtualNodes.total} virtual nodes`);
  if (Object.keys(plan.sharding).length > 0) parts.push(`${Object.keys(plan.sharding).length} sharded layers`);
  return parts.join(' · ');
}

function SuggestionItem({ suggestion, rank, capacity, local }: { suggestion: Suggestion; rank: number; capacity: number[]; local: boolean }) {
  const { plan, predicted, rationale } = suggestion;
  const blocker = local ? executionSupport(plan).find((d) => d.severity === 'error') : undefined;
  const peak = Math.max(...predicted.peakMemoryBytes);
  const device = predicted.peakMemoryBytes.indexOf(peak);
  return (
    <li
      className="suggestion"
      data-testid="suggestion"
      tabIndex={0}
      onMouseEnter={() => setPreview(plan)}
      onMouseLeave={() => setPreview(undefined)}
      onFocus={() => setPreview(plan)}
      onBlur={() => setPreview(undefined)}
    >
      <div className="suggestion__head">
        <span className="suggestion__rank">#{rank}</span>
        <span className="suggestion__shape">{planShape(plan)}</span>
      </div>
      <div className="suggestion__facts">
        <span title="Predicted step time">{formatMs(predicted.stepTimeMs)}</span>
        <span title={`Peak memory, on device ${device}`}>
          {formatBytes(peak)} / {formatBytes(capacity[device] ?? 0)}
        </span>
        <span title="Pipeline bubble">bubble {formatPercent(predicted.bubbleFraction, 0)}</span>
        <span title="Traffic per step">↔ {formatBytes(predicted.commBytesPerStep)}</span>
      </div>
      <div className="suggestion__why">{rationale}</div>
      {local && (
        <div className={`suggestion__runs${blocker ? ' suggestion__runs--no' : ''}`} title={blocker?.hint}>
          {blocker ? `Not trainable here yet: ${blocker.message}` : 'The agents can train this plan here.'}
        </div>
      )}
      <button type="button" className="button button--small" data-testid="apply-suggestion" onClick={() => loadPlan(plan, `auto-plan #${rank}`)}>
        Apply
      </button>
    </li>
  );
}

/** The planner's best plans for the open model on the chosen cluster; hover to preview, Apply to edit. */
export function AutoPlanPanel() {
  const model = useStudio((s) => s.model);
  const choice = useStudio((s) => s.cluster);
  const agents = useStudio((s) => s.agents);
  const state = usePlanner(model, choice, agents);
  const capacity = clusterSpec(choice, agents).devices.map((d) => d.memoryBytes);
  return (
    <section className="panel autoplan" aria-label="Auto-plan" data-testid="autoplan-panel">
      <h2 className="panel__title">Auto-plan · {clusterLabel(choice, agents)}</h2>
      {state.status === 'running' && (
        <div className="autoplan__progress muted" data-testid="autoplan-progress" role="status">
          Searching plans{state.total > 0 ? ` · ${Math.round((100 * state.done) / state.total)}%` : '…'}
        </div>
      )}
      {state.status === 'error' && <div className="diagnostic diagnostic--error">The planner failed: {state.message}</div>}
      {state.status === 'done' && state.result.suggestions.length === 0 && (
        <div className="muted" data-testid="autoplan-empty">
          No plan fits this model in the memory of {clusterLabel(choice, agents)}. Pick a bigger cluster.
        </div>
      )}
      {state.status === 'done' && state.result.suggestions.length > 0 && (
        <>
          <ol className="suggestions">
            {state.result.suggestions.map((s, i) => (
              <SuggestionItem key={i} suggestion={s} rank={i + 1} capacity={capacity} local={choice === 'local'} />
            ))}
          </ol>
          <div className="autoplan__foot muted">
            {formatCount(state.result.evaluated)} candidates in {formatMs(state.result.searchMs)}
          </div>
        </>
      )}
    </section>
  );
}
