import { startTraining, stopTraining } from '../store/actions';
import { isActive } from '../store/metrics';
import { usePlan } from '../store/planState';
import { useStudio } from '../store/studioStore';

/** Train starts the current plan on local agents; Stop ends the running job. */
export function TrainControls() {
  const connected = useStudio((s) => s.connection.state === 'connected');
  const model = useStudio((s) => s.model);
  const job = useStudio((s) => s.job);
  const { plan, diagnostics } = usePlan();
  const running = !!job && isActive(job.metrics.state);
  const blocked = !plan || diagnostics.some((d) => d.severity === 'error');
  const why = !connected
    ? 'Not connected'
    : !model
      ? 'Pick a model'
      : model.numClasses === undefined
        ? 'This model can be planned and priced but not trained yet'
        : blocked
          ? 'Fix the plan first'
          : running
            ? 'A job is running'
            : undefined;
  return (
    <div className="train-controls">
      <button type="button" className="button button--primary" data-testid="train-button" disabled={!!why} title={why} onClick={() => void startTraining()}>
        {running ? 'Training…' : 'Train'}
      </button>
      <button type="button" className="button" data-testid="stop-button" disabled={!running || !job?.id} onClick={() => void stopTraining()}>
        Stop
      </button>
    </div>
  );
}
