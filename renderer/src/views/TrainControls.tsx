import { DeployControls } from '../deploy/DeployControls';
import { startTraining, stopTraining } from '../store/actions';
import { isActive } from '../store/metrics';
import { usePlan } from '../store/planState';
import { useStudio } from '../store/studioStore';

/**
 * Train starts the edited plan on local agents (or says why it cannot); Deploy starts it detached on a
 * stored cluster or this machine; Stop ends the running job, whichever way it started.
 */
export function TrainControls() {
  const connected = useStudio((s) => s.connection.state === 'connected');
  const model = useStudio((s) => s.model);
  const job = useStudio((s) => s.job);
  const local = useStudio((s) => s.cluster === 'local');
  const { plan, diagnostics } = usePlan();
  const running = !!job && isActive(job.metrics.state);
  const firstError = diagnostics.find((d) => d.severity === 'error');
  // Deploying has Train's conditions but any target: the plan is placed on the target's hosts.
  // Why a button is disabled, in the order a user fixes things; Train also needs This machine.
  const modelWhy = !connected ? 'Not connected.' : !model ? 'Pick a model.' : model.numClasses === undefined ? 'This model can be planned and priced but not trained yet.' : undefined;
  const planWhy = !plan ? 'There is no plan to run.' : firstError ? `Fix the plan first: ${firstError.message}` : running ? 'A job is running.' : undefined;
  const deployWhy = modelWhy ?? planWhy;
  const why = modelWhy ?? (!local ? 'Training runs on This machine: pick it as the cluster to train this plan.' : planWhy);
  return (
    <div className="train">
      <div className="train-controls">
        <button type="button" className="button button--primary" data-testid="train-button" disabled={!!why} title={why} onClick={() => void startTraining()}>
          {running ? 'Training…' : 'Train'}
        </button>
        <button type="button" className="button" data-testid="stop-button" disabled={!running || !job?.id} onClick={() => void stopTraining()}>
          Stop
        </button>
      </div>
      <DeployControls why={deployWhy} />
      {why && !running && connected && model && (
        <div className="train__why muted" data-testid="train-why">
          {why}
        </div>
      )}
    </div>
  );
}
