/**
 * The job's metrics as CSV: one row per optimizer step (step, epoch, loss, samples/s, step time, comm
 * wait), with the validation accuracy and loss on the rows of the steps that were evaluated (empty elsewhere).
 */
export interface MetricsTable {
  steps: number[];
  stepEpochs: number[];
  loss: number[];
  samplesPerSec: number[];
  stepMs: number[];
  /** NaN where the step did not report it (asynchronous schedule). */
  commWaitMs: number[];
  evalSteps: number[];
  /** Percent. */
  accuracy: number[];
  validationLoss: number[];
}

export const METRICS_CSV_HEADER = ['step', 'epoch', 'loss', 'samples_per_sec', 'step_ms', 'comm_wait_ms', 'validation_accuracy', 'validation_loss'];

/** A number as a CSV cell: empty when missing or not finite, otherwise up to 6 significant digits. */
const cell = (v: number | undefined) => (v === undefined || !Number.isFinite(v) ? '' : Number.isInteger(v) ? String(v) : String(Number(v.toPrecision(6))));

export function metricsCsv(t: MetricsTable): string {
  const evals = new Map(t.evalSteps.map((s, i) => [s, i]));
  const lines = [METRICS_CSV_HEADER.join(',')];
  for (let i = 0; i < t.steps.length; i++) {
    const e = evals.get(t.steps[i]);
    const accuracy = e === undefined ? undefined : t.accuracy[e] / 100;
    lines.push([t.steps[i], t.stepEpochs[i], t.loss[i], t.samplesPerSec[i], t.stepMs[i], t.commWaitMs[i], accuracy, e === undefined ? undefined : t.validationLoss[e]].map(cell).join(','));
  }
  // Evaluations of steps with no step row (e.g. an evaluation before the first step): rows of their own.
  const stepSet = new Set(t.steps);
  t.evalSteps.forEach((s, e) => {
    if (!stepSet.has(s)) lines.push([s, undefined, undefined, undefined, undefined, undefined, t.accuracy[e] / 100, t.validationLoss[e]].map(cell).join(','));
  });
  return `${lines.join('\n')}\n`;
}

/** A file name safe on every platform: the job's model and id, e.g. "mlp-job-3-metrics.csv". */
export function exportName(model: string, jobId: string | undefined, what: string, extension: string): string {
  const safe = (s: string) => s.replace(/[^A-Za-z0-9_.-]+/g, '-').replace(/^-+|-+$/g, '');
  return `${[safe(model), jobId ? safe(jobId) : ''].filter(Boolean).join('-')}-${what}.${extension}`;
}
