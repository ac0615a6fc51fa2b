import { useEffect } from 'react';
import './deploy.css';
import { refreshClusters, testClusterInView, useClusters } from '../clusters/clustersStore';
import { useMinuteClock } from '../clusters/StoredTest';
import { openOverlay } from '../shell/shellStore';
import { useStudio } from '../store/studioStore';
import { deployReadiness } from './deployReadiness';
import { deployPlan, setDeployTarget, setNoGpu, useDeploy } from './deployStore';

/**
 * Where a deploy goes — This machine (detached: the job outlives the studio) or a stored SSH cluster —
 * and the Deploy button. `why` is the reason it cannot deploy now (the same checks as Train's).
 */
export function DeployControls({ why }: { why?: string }) {
  const target = useDeploy((s) => s.target);
  const noGpu = useDeploy((s) => s.noGpu);
  const listing = useClusters((s) => s.listing);
  const connected = useStudio((s) => s.connection.state === 'connected');
  const testing = useClusters((s) => s.test?.state === 'running');
  const now = useMinuteClock();
  // The stored clusters, once the API is there (the Clusters view keeps the same list current).
  useEffect(() => {
    if (connected) void refreshClusters();
  }, [connected]);
  const clusters = listing?.clusters ?? [];
  const known = target === 'local' || clusters.some((c) => c.name === target);
  // A cluster whose last connection test failed is not deployed to until a test passes (./deployReadiness.ts).
  const lastTest = useClusters((s) => (target === 'local' ? undefined : s.lastTests[target]));
  const readiness = target === 'local' || !known ? {} : deployReadiness(target, lastTest, now);
  const blocked = why ?? (known ? readiness.blocked : `Cluster ${target} is no longer stored: pick another target.`);
  return (
    <div className="deploy-controls">
      <label className="field__label" htmlFor="deploy-target">
        Deploy to
      </label>
      <select id="deploy-target" data-testid="deploy-target" value={target} onChange={(e) => setDeployTarget(e.target.value)}>
        <option value="local">This machine</option>
        {clusters.map((c) => (
          <option key={c.name} value={c.name}>
            {c.name} ({c.hosts.length} host{c.hosts.length === 1 ? '' : 's'})
          </option>
        ))}
      </select>
      <button type="button" className="button" data-testid="deploy-button" disabled={!!blocked} title={blocked ?? 'Start the plan detached on the target; it keeps running when the studio closes.'} onClick={() => void deployPlan()}>
        Deploy
      </button>
      {!why && (readiness.blocked || readiness.note) && (
        <div className="deploy-controls__readiness">
          <span className={readiness.blocked ? 'error-text' : 'muted'} data-testid={readiness.blocked ? 'deploy-blocked' : 'deploy-note'}>
            {readiness.blocked ?? readiness.note}
          </span>
          <button type="button" className="button button--small" data-testid="deploy-test-cluster" disabled={testing} onClick={() => testClusterInView(target, () => openOverlay('clusters'))}>
            {testing ? 'Testing…' : lastTest ? 'Test again' : 'Test now'}
          </button>
        </div>
      )}
      {target !== 'local' && (
        <label className="deploy-controls__option muted" title="Do not install @tensorflow/tfjs-node-gpu on GPU hosts (for hosts that cannot reach the npm registry): agents train on wasm.">
          <input type="checkbox" data-testid="deploy-no-gpu" checked={noGpu} onChange={(e) => setNoGpu(e.target.checked)} /> wasm only, no GPU runtime
        </label>
      )}
    </div>
  );
}
