import type { Diagnostic } from '../../../engine/plan/diagnostics';

/** The plan's diagnostics about one field, right under the control that sets it. */
export function FieldIssues({ issues }: { issues: Diagnostic[] | undefined }) {
  if (!issues?.length) return null;
  return (
    <ul className="field-issues" data-testid="field-issues">
      {issues.map((d, i) => (
        <li key={i} className={`field-issues__item field-issues__item--${d.severity}`} title={d.hint}>
          {d.message}
        </li>
      ))}
    </ul>
  );
}
