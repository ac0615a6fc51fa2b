import { useEffect } from 'react';
import './deploy.css';
import { refreshClusters, useClusters } from '../clusters/clustersStore';
import { useStudio } from '../store/studioStore';
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
  // The stored clusters, once the API is there (the Clusters view keeps the same list current).
  useEffect(() => {
    if (connected) void refreshClusters();
  }, [connected]);
  const clusters = listing?.clusters ?? [];
  const known = target === 'local' || clusters.some((c) => c.name === target);
  // A cluster whose last connection test failed is not deployed to until a test passes (clusters/clustersStore.ts).
  const lastTest = useClusters((s) => (target === 'local' ? undefined : s.lastTests[target]));
  const failedTest = lastTest && lastTest.ready < lastTest.hosts ? `The last connection test of ${target} found ${lastTest.ready} of ${lastTest.hosts} host${lastTest.hosts === 1 ? '' : 's'} ready (${lastTest.failed.map((f) => `${f.host}: ${f.why}`).join('; ')}): fix them and test again in Clusters.` : undefined;
  const blocked = why ?? (known ? failedTest : `Cluster ${target} is no longer stored: pick another target.`);
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
      {!why && failedTest && (
        <span className="error-text" data-testid="deploy-blocked">
          {failedTest}
        </span>
      )}
      {target !== 'local' && (
        <label className="deploy-controls__option muted" title="Do not install @tensorflow/tfjs-node-gpu on GPU hosts (for hosts that cannot reach the npm registry): agents train on wasm.">
          <input type="checkbox" data-testid="deploy-no-gpu" checked={noGpu} onChange={(e) => setNoGpu(e.target.checked)} /> wasm only, no GPU runtime
        </label>
      )}
    </div>
  );
}
