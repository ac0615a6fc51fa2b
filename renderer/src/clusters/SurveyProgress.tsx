import type { SurveyView } from '../../../engine/protocol/clusters';

const MARK: Record<string, string> = { running: '…', ok: '✓', warn: '!', fail: '✗', skipped: '–' };

/** The link survey after preflight, step by step: agent upload per host, agents joining, linking, probing. */
export function SurveyProgress({ survey }: { survey: SurveyView }) {
  if (survey.state === 'waiting') return null;
  return (
    <section data-testid="survey" data-state={survey.state}>
      <h4 className="panel__title">Link survey {survey.state === 'running' ? '(running)' : survey.state === 'failed' ? '(failed)' : survey.state === 'skipped' ? '(skipped)' : ''}</h4>
      {survey.detail && (
        <p className={survey.state === 'failed' ? 'error-text' : 'muted'} data-testid="survey-detail">
          {survey.detail.split('\n')[0]}
        </p>
      )}
      {survey.profile && (
        <p className="muted" data-testid="survey-detail">
          {survey.profile.links.length} pair{survey.profile.links.length === 1 ? '' : 's'} of {survey.profile.hosts.length} hosts measured and stored for this cluster.
        </p>
      )}
      {survey.state !== 'done' && (
        <ul className="preflight">
          {survey.steps.map((s) => (
            <li key={`${s.host} ${s.step}`} className={`preflight__step preflight__step--${s.status}`} data-host={s.host} data-step={s.step} data-status={s.status}>
              <span className="preflight__mark">{MARK[s.status] ?? '…'}</span> <span className="preflight__name">{s.host} {s.step}</span> <span className="preflight__detail">{s.detail.split('\n')[0]}</span>
            </li>
          ))}
        </ul>
      )}
    </section>
  );
}
