import type { DeployHostView, DeployStepView } from '../../../engine/protocol/deploy';
import { TrustDialog } from '../clusters/TrustDialog';
import { useEffect } from 'react';
import { useStudio } from '../store/studioStore';
import { answerDeployTrust, dismissDeploy, recoverDeployProgress, useDeploy } from './deployStore';

const MARK: Record<DeployStepView['status'], string> = { running: '…', progress: '…', ok: '✓', skipped: '–', fail: '✗' };
const STEP_NAMES: Record<DeployStepView['step'], string> = { queue: 'Slurm queue', connect: 'connect', setup: 'setup', upload: 'upload', 'gpu-runtime': 'GPU runtime', ready: 'start' };
const PHASE_TEXT = {
  preparing: 'Preparing hosts',
  starting: 'Starting the job',
  attaching: 'Re-attaching',
  following: 'Running: events below',
  failed: 'Failed',
  detached: 'Not followed',
} as const;

/**
 * The deploy's own error without the lines that repeat a host's error (those show in the host's row):
 * "1 of 2 hosts are not ready…", what was kept, what to do.
 */
export function deployErrorSummary(error: string, hosts: DeployHostView[]): string {
  const hostErrors = hosts.flatMap((h) => (h.error ? [h.error.trim()] : []));
  const repeats = (line: string) => {
    const text = line.trim().replace(/^✗\s*/, '');
    return text.length > 0 && hostErrors.some((e) => e === text || e.startsWith(text) || text.startsWith(e));
  };
  return error
    .split('\n')
    .filter((line) => !repeats(line))
    .join('\n');
}

function HostRow({ host }: { host: DeployHostView }) {
  return (
    <li className="deploy-host" data-testid="deploy-host" data-host={host.host} data-ok={host.ok === undefined ? '' : String(host.ok)}>
      <strong>{host.host}</strong>
      <ul className="preflight">
        {host.steps.map((s) => (
          <li key={s.step} className={`preflight__step preflight__step--${s.status}`} data-step={s.step} data-status={s.status}>
            <span className="preflight__mark">{MARK[s.status]}</span> <span className="preflight__name">{STEP_NAMES[s.step]}</span>{' '}
            {/* A failed step's words are the host's error, shown once under its steps. */}
            <span className="preflight__detail">{s.status === 'fail' && host.error?.includes(s.detail.split('\n')[0]) ? 'failed (below)' : s.detail.split('\n')[0]}</span>
          </li>
        ))}
      </ul>
      {host.error && (
        <div className="deploy-host__error" data-testid="deploy-host-error">
          {host.error}
        </div>
      )}
    </li>
  );
}

/**
 * A deploy as it happens: one row per host with connect and probe, upload (with bytes), GPU runtime
 * and start, each host's error for itself, and the trust dialog when a host's key is unknown.
 */
export function DeployProgress() {
  const status = useDeploy((s) => s.status);
  const error = useDeploy((s) => s.error);
  const shownJob = useStudio((s) => s.job?.id);
  useEffect(() => {
    if (shownJob) void recoverDeployProgress(shownJob);
  }, [shownJob]);
  if (!status) return error ? <div className="deploy-progress__error">{error}</div> : null;
  const where = status.cluster === 'local' ? 'this machine' : status.cluster;
  return (
    <section className="panel deploy-progress" aria-label="Deploy progress" data-testid="deploy-progress" data-job={status.jobId} data-phase={status.phase}>
      <div className="deploy-progress__head">
        <h2 className="panel__title">
          {status.jobId} on {where}
        </h2>
        <button type="button" className="button button--small" onClick={dismissDeploy} title="Hide these rows (the job goes on)">
          ×
        </button>
      </div>
      <div className="muted" data-testid="deploy-phase">
        {PHASE_TEXT[status.phase]}
      </div>
      <ul className="deploy-hosts">
        {status.hosts.map((h) => (
          <HostRow key={h.host} host={h} />
        ))}
      </ul>
      {status.error && (
        <div className="deploy-progress__error" data-testid="deploy-error">
          {deployErrorSummary(status.error, status.hosts)}
        </div>
      )}
      {error && <div className="deploy-progress__error">{error}</div>}
      {status.trust[0] && <TrustDialog prompt={status.trust[0]} onAnswer={(trust) => void answerDeployTrust(status.trust[0].id, trust)} />}
    </section>
  );
}
