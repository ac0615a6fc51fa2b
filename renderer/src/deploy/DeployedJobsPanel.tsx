import { useEffect } from 'react';
import { useStudio } from '../store/studioStore';
import { openDeployedJob, refreshDeployedJobs, useDeploy } from './deployStore';

/**
 * Jobs on clusters: the deployed jobs this machine remembers (deploy.json in the run folders), their
 * state asked of their hosts. Open re-attaches and back-fills the whole history into the Monitor —
 * also after the studio was closed and started again.
 */
export function DeployedJobsPanel() {
  const connected = useStudio((s) => s.connection.state === 'connected');
  const shown = useStudio((s) => s.job?.id);
  const jobs = useDeploy((s) => s.jobs);
  const loading = useDeploy((s) => s.loadingJobs);
  useEffect(() => {
    if (connected) void refreshDeployedJobs();
  }, [connected]);
  return (
    <section className="panel deployed-jobs" aria-label="Jobs on clusters" data-testid="deployed-jobs">
      <div className="deploy-progress__head">
        <h2 className="panel__title">Jobs on clusters</h2>
        <button type="button" className="button button--small" data-testid="refresh-deployed-jobs" disabled={!connected || loading} onClick={() => void refreshDeployedJobs()}>
          {loading ? 'Asking hosts…' : 'Refresh'}
        </button>
      </div>
      {jobs?.length === 0 && <span className="muted">No deployed jobs yet: Deploy starts one that keeps running when the studio closes.</span>}
      <ul className="deployed-jobs__list">
        {jobs?.map((j) => (
          <li key={j.jobId} className="deployed-job" data-testid="deployed-job" data-job={j.jobId} data-state={j.state}>
            <div>
              <strong>{j.jobId}</strong> <span className={`deployed-job__state deployed-job__state--${j.state}`}>{j.state}</span>
              <div className="muted">
                {j.model} on {j.cluster === 'local' ? 'this machine' : j.cluster} · {j.detail}
              </div>
            </div>
            <button type="button" className="button button--small" data-testid="open-deployed-job" disabled={shown === j.jobId} onClick={() => void openDeployedJob(j)}>
              {shown === j.jobId ? 'Shown' : 'Open'}
            </button>
          </li>
        ))}
      </ul>
    </section>
  );
}
