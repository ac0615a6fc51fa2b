import { resolve } from 'node:path';
import { MNIST_TEST, MNIST_TRAIN } from '../data/mnistSplit.js';
import { mnistMismatch, modelArrays } from '../data/modelArrays.js';
import type { ModelGraph } from '../model/graph.js';
import { trainingConfigOf, trainingSpecFor } from '../model/trainingSpec.js';
import { openUserData } from '../wire/data/openUserData.js';
import { optimizerFromKeras, optimizerFromOptions } from '../plan/optimizerOptions.js';
import type { OptimizerConfig } from '../plan/plan.js';
import { defaultTraining, type DataRef, type TrainingSetup } from '../protocol/trainingSetup.js';
import { modelDocument } from './modelRef.js';

export type OptionValues = Record<string, string | boolean | undefined>;

/** The command-line options about data, losses and the optimizer (train, deploy). */
export const TRAINING_OPTIONS = {
  data: { type: 'string' },
  'validation-split': { type: 'string' },
  loss: { type: 'string' },
  optimizer: { type: 'string' },
  momentum: { type: 'string' },
  nesterov: { type: 'boolean' },
  'weight-decay': { type: 'string' },
  shuffle: { type: 'string' },
} as const;

export function dataRefFrom(values: OptionValues, graph: ModelGraph): DataRef {
  const data = values.data === undefined ? undefined : String(values.data);
  const split = values['validation-split'] === undefined ? undefined : Number(values['validation-split']);
  if (split !== undefined && !(split > 0 && split < 1)) throw new Error(`--validation-split must be a fraction between 0 and 1 (exclusive); got ${values['validation-split']}.`);
  if (data === undefined || data === 'mnist') {
    if (data === undefined && graph.source) throw new Error(`Model ${graph.source.modelFile} needs data: pass --data DIR (a folder of .npy files: x.npy and y.npy, or one <layer>.npy per input and output), --data mnist, or --data synthetic.`);
    return { kind: 'mnist' };
  }
  if (data === 'synthetic' || data.startsWith('synthetic:')) {
    const samples = data.includes(':') ? Number(data.split(':')[1]) : 1024;
    if (!Number.isInteger(samples) || samples < 1) throw new Error(`--data synthetic:N needs a whole number of samples; got "${data}".`);
    return { kind: 'synthetic', samples, validation: Math.max(1, Math.round(samples / 4)) };
  }
  return { kind: 'npy', dir: resolve(data), ...(split === undefined ? {} : { validationSplit: split }) };
}

/**
 * The job's data and losses, checked against the model now — every file, shape and label range —
 * so that a mistake is reported before any agent starts, with the file and the fix.
 */
export function trainingSetupFrom(values: OptionValues, graph: ModelGraph, seed: number): TrainingSetup & { notes: string[] } {
  return trainingSetupFor(graph, dataRefFrom(values, graph), values.loss === undefined ? undefined : String(values.loss), seed);
}

/** The same for a data reference and loss name given directly (the studio's Train and Deploy). */
export function trainingSetupFor(graph: ModelGraph, data: DataRef, loss: string | undefined, seed: number): TrainingSetup & { notes: string[] } {
  if (!graph.source && data.kind === 'mnist' && loss === undefined) return { ...defaultTraining(graph), notes: [] };
  const spec = trainingSpecFor(graph, modelDocument(graph), { loss });
  const arrays = modelArrays(graph, spec.outputs);
  if (data.kind === 'mnist') {
    // The digits travel with the agents; here only whether they fit the model can be checked.
    const mismatch = mnistMismatch(graph, arrays);
    if (mismatch) throw new Error(mismatch);
    return { data, losses: spec.outputs, trainSamples: MNIST_TRAIN, validationSamples: MNIST_TEST, notes: ['data: the bundled MNIST digits', ...spec.notes] };
  }
  const dataset = openUserData(data, arrays, seed);
  try {
    return { data, losses: spec.outputs, trainSamples: dataset.train.size, validationSamples: dataset.validation.size, notes: [`data: ${dataset.describe}`, ...spec.notes] };
  } finally {
    dataset.close();
  }
}

/** The optimizer the options name, else the model file's own (training_config), else `fallback`. */
export function optimizerFrom(values: OptionValues, graph: ModelGraph, fallback: OptimizerConfig | undefined): OptimizerConfig | undefined {
  const lr = values.lr === undefined ? undefined : Number(values.lr);
  const number = (key: string) => (values[key] === undefined ? undefined : Number(values[key]));
  if (values.optimizer !== undefined) {
    return optimizerFromOptions(String(values.optimizer), lr, { momentum: number('momentum'), nesterov: values.nesterov === true, weightDecay: number('weight-decay') });
  }
  const doc = modelDocument(graph);
  const fromFile = optimizerFromKeras(doc === undefined ? undefined : trainingConfigOf(doc)?.optimizer_config);
  if (fromFile) return lr === undefined ? fromFile : { ...fromFile, learningRate: lr };
  return lr === undefined ? fallback : fallback && { ...fallback, learningRate: lr };
}

export function shuffleFrom(values: OptionValues): boolean | undefined {
  if (values.shuffle === undefined) return undefined;
  const v = String(values.shuffle).toLowerCase();
  if (v === 'false' || v === '0' || v === 'no') return false;
  if (v === 'true' || v === '1' || v === 'yes') return true;
  throw new Error(`--shuffle takes true or false; got "${values.shuffle}".`);
}
