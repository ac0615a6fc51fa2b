import type { Diagnostic } from '../../../engine/plan/diagnostics';
import { setSelection } from '../editor/editorStore';
import { useStudio } from '../store/studioStore';

const NEEDS = /needs (\d+) agents/;

/** Every diagnostic of the plan; one about a layer selects it, too-few-agents offers the fix. */
export function DiagnosticList({ diagnostics, hasPlan }: { diagnostics: Diagnostic[]; hasPlan: boolean }) {
  const set = useStudio((s) => s.set);
  const local = useStudio((s) => s.cluster === 'local');
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
              <button type="button" className="button button--small diagnostic__fix" data-testid="fix-agents" onClick={() => set({ agents: needed })}>
                Use {needed} agents
              </button>
            )}
          </li>
        );
      })}
      {hasPlan && diagnostics.length === 0 && <li className="diagnostic diagnostic--ok">Plan is valid.</li>}
    </ul>
  );
}
