import type { RunDetail } from '../../../engine/protocol/runs';
import { exportName, metricsCsv } from '../monitor/metricsCsv';
import { downloadText } from '../shell/download';
import { errorText } from '../store/errorText';
import { loadDetail, useRuns } from './runsStore';

/**
 * Any run's metrics as files, from its history on disk: CSV in the Monitor's columns (one row per
 * step, validation results on the evaluated steps) and JSON (the summary with name, tags and notes,
 * the plan, every curve, evaluation, membership change and the final result).
 */
export function runMetricsCsv(detail: RunDetail): string {
  const { curves, evals } = detail;
  return metricsCsv({
    steps: curves.step,
    stepEpochs: curves.epoch ?? curves.step.map(() => NaN),
    loss: curves.loss,
    samplesPerSec: curves.samplesPerSec,
    stepMs: curves.stepMs,
    // Runs on disk do not keep the communication wait.
    commWaitMs: curves.step.map(() => NaN),
    evalSteps: evals.map((e) => e.step),
    accuracy: evals.map((e) => (e.validationAccuracy ?? NaN) * 100),
    validationLoss: evals.map((e) => e.validationLoss),
  });
}

export function runMetricsJson(detail: RunDetail): string {
  const { summary, plan, curves, evals, final, dataset, membership, measuredStepMs, predictedStepMs, calibratedStepMs, message } = detail;
  return `${JSON.stringify({ run: summary, plan, dataset, curves, evaluations: evals, final, membership, stepTime: { measuredStepMs, predictedStepMs, calibratedStepMs }, message }, null, 2)}\n`;
}

/** Download run `id`'s metrics; its detail is fetched first when it is not open. */
export async function downloadRunMetrics(id: string, format: 'csv' | 'json'): Promise<void> {
  try {
    await loadDetail(id);
    const detail = useRuns.getState().details[id];
    if (!detail) return;
    const name = exportName(detail.summary.model, id, 'metrics', format);
    if (format === 'csv') downloadText(name, runMetricsCsv(detail), 'text/csv');
    else downloadText(name, runMetricsJson(detail), 'application/json');
  } catch (error) {
    useRuns.setState({ error: `Could not export run ${id}: ${errorText(error)}` });
  }
}
