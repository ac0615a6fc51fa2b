import type { Diagnostic } from '../../../engine/plan/diagnostics';

/** A small badge on a graph node naming the plan's diagnostics about it (all of them on hover). */
export function IssueMark({ issues }: { issues: Diagnostic[] }) {
  if (issues.length === 0) return null;
  const severity = issues.some((d) => d.severity === 'error') ? 'error' : 'warning';
  return (
    <span className={`issue-mark issue-mark--${severity}`} data-testid="node-issue" data-severity={severity} title={issues.map((d) => `${d.message} ${d.hint}`).join('\n')}>
      {severity === 'error' ? '!' : '⚠'} {issues.length > 1 ? issues.length : ''}
    </span>
  );
}
