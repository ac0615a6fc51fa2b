/**
 * The metrics a job reports on its validation set: those the model file's training config compiles
 * (Keras `metrics`: a list for every output, a list of lists or a dict by output), else accuracy for
 * every classifier output. Each is either an accuracy kind or one of the losses Shoal computes, so
 * that the agents can return it as an additive sum. Pure TypeScript: the studio and the agents use it.
 */
import { isObject, read, type Json } from './import/configValues.js';
import type { AccuracyMetric, LossName, OutputLoss } from './trainingSpec.js';

export type MetricKind = AccuracyMetric | LossName;

export interface EvalMetric {
  /** Graph id of the output it measures. */
  output: string;
  /** The name it is reported under: Keras's (`accuracy`, `mae`, …), `<output>_<name>` when the model has several outputs. */
  name: string;
  kind: MetricKind;
}

/** Spellings folded to lower case without separators. `accuracy` takes the output's own kind. */
const KINDS: Record<string, MetricKind | 'accuracy'> = {
  accuracy: 'accuracy',
  acc: 'accuracy',
  categoricalaccuracy: 'categoricalAccuracy',
  sparsecategoricalaccuracy: 'sparseCategoricalAccuracy',
  binaryaccuracy: 'binaryAccuracy',
  mae: 'meanAbsoluteError',
  meanabsoluteerror: 'meanAbsoluteError',
  mse: 'meanSquaredError',
  meansquarederror: 'meanSquaredError',
  categoricalcrossentropy: 'categoricalCrossentropy',
  sparsecategoricalcrossentropy: 'sparseCategoricalCrossentropy',
  binarycrossentropy: 'binaryCrossentropy',
};

const fold = (name: string) => name.trim().split('.').pop()!.replace(/[_\-\s]/g, '').toLowerCase();

/** A metric entry's spelling and the name Keras reports it under. */
function metricName(entry: unknown): { spelling: string; name: string } | undefined {
  if (typeof entry === 'string') return { spelling: entry, name: entry };
  if (!isObject(entry) || typeof entry.class_name !== 'string') return undefined;
  const config = isObject(entry.config) ? entry.config : undefined;
  const spelling = entry.class_name === 'function' && typeof entry.config === 'string' ? entry.config : entry.class_name;
  const named = config ? read(config, 'name') : undefined;
  return { spelling, name: typeof named === 'string' ? named : spelling.replace(/([a-z0-9])([A-Z])/g, '$1_$2').toLowerCase() };
}

/** Whether an output trained with `spec` can be measured by `kind` on its targets. */
function fits(spec: OutputLoss, kind: MetricKind): boolean {
  const categorical = (k: string) => k === 'categoricalAccuracy' || k === 'sparseCategoricalAccuracy' || k === 'categoricalCrossentropy' || k === 'sparseCategoricalCrossentropy';
  if (kind === 'categoricalAccuracy' || kind === 'sparseCategoricalAccuracy') return spec.metric !== null && categorical(spec.metric);
  if (kind === 'binaryAccuracy') return spec.metric === 'binaryAccuracy';
  // A loss as a metric needs targets shaped as the output's loss reads them.
  if (kind === 'sparseCategoricalCrossentropy') return spec.loss === kind;
  if (kind === 'categoricalCrossentropy') return spec.loss === kind;
  // Regression errors and binary cross-entropy read one target per output value.
  return spec.loss !== 'sparseCategoricalCrossentropy';
}

/** The entries of `metrics` that apply to output `index` (Keras: a flat list applies to every output). */
function entriesFor(metrics: unknown, outputs: string[], index: number): unknown[] {
  if (Array.isArray(metrics)) {
    if (metrics.length === outputs.length && metrics.every((m) => Array.isArray(m) || m === null)) return (metrics[index] as unknown[] | null) ?? [];
    return metrics;
  }
  if (isObject(metrics) && typeof metrics.class_name !== 'string') {
    const entry = metrics[outputs[index]];
    return entry === undefined || entry === null ? [] : Array.isArray(entry) ? entry : [entry];
  }
  return metrics === undefined || metrics === null ? [] : [metrics];
}

export function evalMetricsFor(losses: OutputLoss[], trainingConfig: Json | undefined): { metrics: EvalMetric[]; notes: string[] } {
  const notes: string[] = [];
  const metrics: EvalMetric[] = [];
  const several = losses.length > 1;
  const named = (spec: OutputLoss, name: string) => (several ? `${spec.output}_${name}` : name);
  const configured = trainingConfig ? read(trainingConfig, 'metrics') : undefined;
  const outputs = losses.map((l) => l.output);
  losses.forEach((spec, index) => {
    // Keras reports each output's own (unweighted) loss beside the total when there are several.
    if (several) metrics.push({ output: spec.output, name: `${spec.output}_loss`, kind: spec.loss });
    const entries = configured === undefined ? (spec.metric ? ['accuracy'] : []) : entriesFor(configured, outputs, index);
    for (const entry of entries) {
      const parsed = metricName(entry);
      const kind = parsed ? KINDS[fold(parsed.spelling)] : undefined;
      if (!parsed || !kind) {
        notes.push(`${spec.output}: the metric ${JSON.stringify(entry)} is not one Shoal computes (accuracy kinds, mae, mse, the cross-entropies); it is not reported.`);
        continue;
      }
      const resolved = kind === 'accuracy' ? spec.metric : kind;
      if (!resolved || !fits(spec, resolved)) {
        notes.push(`${spec.output}: the metric "${parsed.name}" does not fit its ${spec.loss} targets; it is not reported.`);
        continue;
      }
      const name = named(spec, parsed.name);
      if (!metrics.some((m) => m.name === name)) metrics.push({ output: spec.output, name, kind: resolved });
    }
  });
  return { metrics, notes };
}

/** Whether a metric kind is an accuracy (counted per position) rather than a loss (averaged per row). */
export function isAccuracy(kind: MetricKind): kind is AccuracyMetric {
  return kind === 'categoricalAccuracy' || kind === 'sparseCategoricalAccuracy' || kind === 'binaryAccuracy';
}
