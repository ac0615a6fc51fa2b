import { z } from 'zod';
import { DatasetDescriptionSchema, ValidationHoldOutSchema } from '../data/datasetDescription.js';
import { MNIST_TEST, MNIST_TRAIN } from '../data/mnistSplit.js';
import type { ModelGraph } from '../model/graph.js';

/**
 * What a job trains on and what it minimises, as the coordinator hands it to every agent: the data
 * source, one loss per model output, and the split sizes the job was checked against before start.
 */
export const DataRefSchema = z.discriminatedUnion('kind', [
  /** The handwritten digits bundled with the agent (the zoo's MNIST models). */
  z.object({ kind: z.literal('mnist') }),
  /** Deterministic random inputs and labels of the model's shapes (benchmarks and dry runs). */
  z.object({ kind: z.literal('synthetic'), samples: z.number().int().positive(), validation: z.number().int().min(0) }),
  /** A folder of NumPy files on the host: x.npy / y.npy or one file per input and output layer. */
  z.object({ kind: z.literal('npy'), dir: z.string().min(1), validationSplit: z.number().gt(0).lt(1).optional(), validationHoldOut: ValidationHoldOutSchema.optional() }),
  /**
   * A described dataset (CSV/TSV, image folder, JSON Lines, .npz, .npy folder): a dataset.json's content
   * or what the CLI options mean, with `source` absolute (or `~/…` on the host); `file` is the
   * dataset.json it came from, if any.
   */
  z.object({ kind: z.literal('dataset'), dataset: DatasetDescriptionSchema, file: z.string().optional() }),
]);
export type DataRef = z.infer<typeof DataRefSchema>;

/**
 * A data reference written before a validation split meant model.fit's last rows: it held out a seeded
 * random share, and keeps doing so, so a run resumed (or a project reopened) sees the rows it saw.
 */
export function withEarlierHoldOut(data: unknown): unknown {
  if (typeof data !== 'object' || data === null) return data;
  const ref = data as Record<string, unknown>;
  if (ref.kind === 'npy' && ref.validationSplit !== undefined && ref.validationHoldOut === undefined) return { ...ref, validationHoldOut: 'seededRandom' };
  const described = ref.dataset as Record<string, unknown> | undefined;
  if (ref.kind === 'dataset' && described?.validationSplit !== undefined && described.validationHoldOut === undefined) return { ...ref, dataset: { ...described, validationHoldOut: 'seededRandom' } };
  return data;
}

export const OutputLossSchema = z.object({
  output: z.string(),
  loss: z.enum(['categoricalCrossentropy', 'sparseCategoricalCrossentropy', 'binaryCrossentropy', 'meanSquaredError', 'meanAbsoluteError']),
  fromLogits: z.boolean(),
  weight: z.number(),
  metric: z.enum(['categoricalAccuracy', 'sparseCategoricalAccuracy', 'binaryAccuracy']).nullable(),
});

export const TrainingSetupSchema = z.object({
  data: DataRefSchema,
  losses: z.array(OutputLossSchema).min(1),
  /** Training samples (the epoch length) and validation samples, as checked before the job started. */
  trainSamples: z.number().int().positive(),
  validationSamples: z.number().int().min(0),
  /** Class names by class id per output, where the data names its classes (label names, image class folders), so predictions can be named. */
  classes: z.record(z.string(), z.array(z.string())).optional(),
  /** The metrics reported on the validation set (engine/model/evalMetrics.ts); absent: accuracy for each classifier output. */
  metrics: z
    .array(z.object({ output: z.string(), name: z.string(), kind: z.enum(['categoricalAccuracy', 'sparseCategoricalAccuracy', 'binaryAccuracy', 'categoricalCrossentropy', 'sparseCategoricalCrossentropy', 'binaryCrossentropy', 'meanSquaredError', 'meanAbsoluteError']) }))
    .optional(),
});
export type TrainingSetup = z.infer<typeof TrainingSetupSchema>;

export function describeData(ref: DataRef): string {
  if (ref.kind === 'mnist') return 'the bundled MNIST digits';
  if (ref.kind === 'synthetic') return `synthetic data (${ref.samples} training, ${ref.validation} validation samples)`;
  if (ref.kind === 'dataset') {
    const d = ref.dataset;
    return `${d.name ? `${d.name}: ` : ''}${d.format} ${d.source}${ref.file ? ` (described by ${ref.file})` : ''}${d.validationSplit ? ` (validation split ${d.validationSplit}${d.validationHoldOut === 'seededRandom' ? ', seeded random' : ''})` : ''}`;
  }
  return `NumPy folder ${ref.dir}${ref.validationSplit ? ` (validation split ${ref.validationSplit}${ref.validationHoldOut === 'seededRandom' ? ', seeded random' : ''})` : ''}`;
}

/**
 * The built-in models' training: the bundled digits, and softmax cross-entropy on the logits of their
 * one output (their heads are linear).
 */
/**
 * A job's split sizes: its training setup's, and with none the built-in models' MNIST digits — the one
 * place where "no training setup" is read as MNIST.
 */
export function sampleCounts(training: TrainingSetup | undefined): { trainSamples: number; validationSamples: number } {
  return training ? { trainSamples: training.trainSamples, validationSamples: training.validationSamples } : { trainSamples: MNIST_TRAIN, validationSamples: MNIST_TEST };
}

export function defaultTraining(graph: ModelGraph): TrainingSetup {
  return {
    data: { kind: 'mnist' },
    losses: graph.outputs.map((output) => ({ output, loss: 'sparseCategoricalCrossentropy' as const, fromLogits: true, weight: 1, metric: 'sparseCategoricalAccuracy' as const })),
    trainSamples: MNIST_TRAIN,
    validationSamples: MNIST_TEST,
  };
}
