import type { Diagnostic } from '../../../engine/plan/diagnostics';
import { setSelection } from '../editor/editorStore';
import { useStudio } from '../store/studioStore';
import { usePlan } from '../store/planState';
import { formatMs } from '../format';

const NEEDS = /needs (\d+) agents/;

/** Every diagnostic of the plan; one about a layer selects it, too-few-agents offers the fix. */
export function DiagnosticList({ diagnostics, hasPlan }: { diagnostics: Diagnostic[]; hasPlan: boolean }) {
  const set = useStudio((s) => s.set);
  const local = useStudio((s) => s.cluster === 'local');
  const cores = useStudio((s) => s.info?.cores);
  // The plan is priced on the agents it needs (planState), with agents sharing cores slowed down.
  const { cost, pricedOnAgents } = usePlan();
  return (
    <ul className="diagnostics" data-testid="diagnostics" aria-live="polite">
      {diagnostics.map((d, i) => {
        const needed = d.code === 'too-few-agents' && local ? Number(NEEDS.exec(d.message)?.[1]) : NaN;
        const where = d.where.layer ? `layer ${d.where.layer}` : d.where.stage !== undefined ? `stage ${d.where.stage}` : d.where.field;
        return (
          <li key={i} className={`diagnostic diagnostic--${d.severity}`} data-code={d.code}>
            <strong>
              {where && (
                <button type="button" className="diagnostic__where" disabled={!d.where.layer} onClick={() => d.where.layer && setSelection([d.where.layer])}>
                  {where}
                </button>
              )}
              {d.message}
            </strong>
            <span>{d.hint}</span>
            {needed > 0 && needed <= 64 && (
              <>
                <button type="button" className="button button--small diagnostic__fix" data-testid="fix-agents" onClick={() => set({ agents: needed })}>
                  Use {needed} agents{cores && needed > cores ? ` on ${cores} cores` : ''}
                </button>
                {cores !== undefined && needed > cores && (
                  <span className="diagnostic__oversubscribed" data-testid="oversubscribed">
                    This machine has {cores} cores: {needed} agents oversubscribe them {(needed / cores).toFixed(needed % cores ? 1 : 0)}×: agents computing at the same time share the cores (about {Math.round((100 * cores) / needed)}% speed each)
                    {cost && pricedOnAgents === needed ? ` — predicted ${formatMs(cost.stepMs)} per step with the cores shared` : ''}. Fewer stages or replicas run without sharing.
                  </span>
                )}
              </>
            )}
          </li>
        );
      })}
      {hasPlan && diagnostics.length === 0 && <li className="diagnostic diagnostic--ok">Plan is valid.</li>}
    </ul>
  );
}
