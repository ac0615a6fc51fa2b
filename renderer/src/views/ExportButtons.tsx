import { downloadText } from '../shell/download';
import { exportName, metricsCsv } from '../monitor/metricsCsv';
import type { JobView } from '../store/studioStore';

/** Save the job's metrics as CSV and its plan as JSON (a download in the browser shell, a save dialog in Electron). */
export function ExportButtons({ job }: { job: JobView }) {
  const { metrics, plan } = job;
  return (
    <div className="monitor__export">
      <button
        type="button"
        className="button button--small"
        data-testid="export-csv"
        disabled={metrics.steps.length === 0 && metrics.evalSteps.length === 0}
        title="Every step's loss, throughput and step time, with the validation accuracy where it was evaluated"
        onClick={() => downloadText(exportName(job.model, job.id, 'metrics', 'csv'), metricsCsv(metrics), 'text/csv')}
      >
        Export CSV
      </button>
      <button
        type="button"
        className="button button--small"
        data-testid="export-plan"
        disabled={!plan}
        title={plan ? 'The plan this job runs, as a plan file (shoal train --plan-file)' : 'The plan of a job started before this window opened is not known here'}
        onClick={() => plan && downloadText(exportName(job.model, job.id, 'plan', 'json'), `${JSON.stringify(plan, null, 2)}\n`, 'application/json')}
      >
        Export plan
      </button>
    </div>
  );
}
