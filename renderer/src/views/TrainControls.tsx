import { DeployControls } from '../deploy/DeployControls';
import { useModelFiles } from '../model/modelFiles';
import { stopShownJob } from '../deploy/deployStore';
import { startTraining } from '../store/actions';
import { dataRefOf } from '../store/dataChoice';
import { isActive } from '../store/metrics';
import { usePlan } from '../store/planState';
import { useStudio } from '../store/studioStore';

/**
 * Train starts the edited plan on local agents with the Data section's choice (or says why it cannot):
 * a built-in model, or a model opened from a file once the studio stored it. Deploy starts a built-in
 * model's plan detached on a stored cluster or this machine; Stop ends the running job, whichever way it
 * started.
 */
export function TrainControls() {
  const connected = useStudio((s) => s.connection.state === 'connected');
  const model = useStudio((s) => s.model);
  const modelName = useStudio((s) => s.modelName);
  const data = useStudio((s) => s.data);
  const imported = useModelFiles((s) => s.imported);
  const job = useStudio((s) => s.job);
  const local = useStudio((s) => s.cluster === 'local');
  const { plan, diagnostics } = usePlan();
  const running = !!job && isActive(job.metrics.state);
  const firstError = diagnostics.find((d) => d.severity === 'error');
  // Why a button is disabled, in the order a user fixes things; Train also needs This machine and data.
  // Deploying has Train's conditions but any target (the plan is placed on the target's hosts; the
  // model file and data folder travel with the job).
  const fromFile = !!imported && imported.key === modelName;
  const baseWhy = !connected ? 'Not connected.' : !model ? 'Pick a model.' : undefined;
  const modelWhy =
    baseWhy ??
    (model?.source || model?.numClasses !== undefined
      ? undefined
      : fromFile
        ? `This model cannot train: ${imported.trainError ?? 'open its model.json again, with its .bin files.'}`
        : 'This built-in architecture is for planning and pricing; open a model.json to train your own.');
  const dataRef = dataRefOf(data);
  const planWhy = !plan ? 'There is no plan to run.' : firstError ? `Fix the plan first: ${firstError.message}` : running ? 'A job is running.' : undefined;
  const deployWhy = modelWhy ?? ('why' in dataRef ? dataRef.why : planWhy);
  const why = modelWhy ?? (!local ? 'Training runs on This machine: pick it as the cluster to train this plan.' : 'why' in dataRef ? dataRef.why : planWhy);
  return (
    <div className="train">
      <div className="train-controls">
        <button type="button" className="button button--primary" data-testid="train-button" disabled={!!why} title={why} onClick={() => void startTraining()}>
          {running ? 'Training…' : 'Train'}
        </button>
        <button type="button" className="button" data-testid="stop-button" disabled={!running || !job?.id} onClick={() => void stopShownJob()}>
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
