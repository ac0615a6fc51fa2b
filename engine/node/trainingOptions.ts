import { existsSync, readFileSync, statSync } from 'node:fs';
import { dirname, join, resolve } from 'node:path';
import { formatOfFileName, type DatasetDescription, type ValidationHoldOut } from '../data/datasetDescription.js';
import { parseDatasetDescription } from '../data/validateDataset.js';
import { emptyClassFolders, isImageFolder } from '../wire/data/imageFolder.js';
import { MNIST_TEST, MNIST_TRAIN } from '../data/mnistSplit.js';
import { mnistMismatch, modelArrays } from '../data/modelArrays.js';
import { classCoverage } from '../data/classCoverage.js';
import type { ModelGraph } from '../model/graph.js';
import { evalMetricsFor } from '../model/evalMetrics.js';
import { trainingConfigOf, trainingSpecFor } from '../model/trainingSpec.js';
import { openUserData } from '../wire/data/openUserData.js';
import { optimizerFromKeras, optimizerFromOptions } from '../plan/optimizerOptions.js';
import type { OptimizerConfig } from '../plan/plan.js';
import { defaultTraining, type DataRef, type TrainingSetup } from '../protocol/trainingSetup.js';
import { modelDocument } from './modelRef.js';
import { explainFileError } from '../wire/fileErrors.js';
import { checkNumber, numberOption, type OptionValues } from './commands/optionValues.js';

export type { OptionValues };

/** The command-line options about data, losses and the optimizer (train, deploy). */
export const TRAINING_OPTIONS = {
  data: { type: 'string' },
  'validation-split': { type: 'string' },
  'validation-holdout': { type: 'string' },
  'label-column': { type: 'string' },
  'feature-columns': { type: 'string' },
  loss: { type: 'string' },
  optimizer: { type: 'string' },
  momentum: { type: 'string' },
  nesterov: { type: 'boolean' },
  'weight-decay': { type: 'string' },
  shuffle: { type: 'string' },
} as const;

export function dataRefFrom(values: OptionValues, graph: ModelGraph): DataRef {
  const data = values.data === undefined ? undefined : String(values.data);
  const split = numberOption(values, 'validation-split', { above: 0, below: 1, example: '0.2' });
  const holdOut = validationHoldOutOf(values);
  const held = { ...(split === undefined ? {} : { validationSplit: split }), ...(holdOut === undefined ? {} : { validationHoldOut: holdOut }) };
  if (data === undefined || data === 'mnist') {
    if (data === undefined && graph.source) throw new Error(`Model ${graph.source.modelFile} needs data: pass --data with a folder of .npy files (x.npy and y.npy, or one <layer>.npy per input and output) or of class folders of images, a .csv/.tsv table, a .jsonl file, an .npz, a dataset.json, mnist or synthetic.`);
    return { kind: 'mnist' };
  }
  if (data === 'synthetic' || data.startsWith('synthetic:')) {
    const samples = data.includes(':') ? checkNumber('--data synthetic:N', data.slice(data.indexOf(':') + 1), { min: 1, max: 10_000_000, example: 'synthetic:1024' }, 'whole number') : 1024;
    return { kind: 'synthetic', samples, validation: Math.max(1, Math.round(samples / 4)) };
  }
  const table = tableColumns(values);
  const path = resolve(data);
  const isDir = existsSync(path) && statSync(path).isDirectory();
  const described = isDir && existsSync(join(path, 'dataset.json')) ? join(path, 'dataset.json') : !isDir && /\.json$/i.test(path) ? path : undefined;
  if (described) {
    if (table) throw new Error(`--label-column and --feature-columns go with a .csv/.tsv file; ${described} describes its columns itself (its "inputs" and "outputs").`);
    return describedDataRef(described, held);
  }
  const format = isDir ? (isImageFolder(path) ? 'images' : undefined) : formatOfFileName(path);
  if (table && format !== 'csv' && format !== 'tsv') throw new Error(`--label-column and --feature-columns go with a .csv or .tsv file; --data ${data} is ${format ? `${format} data` : 'a NumPy folder'}.`);
  if (format === undefined) {
    const empty = isDir ? emptyClassFolders(path) : [];
    if (empty.length) {
      const shown = empty.slice(0, 6).join(', ') + (empty.length > 6 ? `, … ${empty.length - 6} more` : '');
      throw new Error(`--data ${data}: its class folders (${shown}) hold no .png or .jpg images, and there are no .npy files beside them. Put each class's images in its folder (${join(path, empty[0], 'image.png')}), or give the folder of .npy files.`);
    }
    if (!isDir && existsSync(path)) throw new Error(`--data ${data}: Shoal cannot tell this file's format by its name. Use .csv, .tsv, .jsonl, .npz, a dataset.json, or a folder (of .npy files or of class folders of images).`);
    if (holdOut !== undefined && split === undefined) throw new Error('--validation-holdout says which rows --validation-split holds out; give --validation-split F too (e.g. --validation-split 0.2).');
    return { kind: 'npy', dir: path, ...held };
  }
  const dataset: DatasetDescription = {
    format,
    source: path,
    ...(table?.features ? { inputs: [{ columns: table.features }] } : {}),
    ...(table?.label ? { outputs: [{ columns: [table.label] }] } : {}),
    ...held,
  };
  return { kind: 'dataset', dataset };
}

function tableColumns(values: OptionValues): { label?: string; features?: string[] } | undefined {
  const label = values['label-column'] === undefined ? undefined : String(values['label-column']).trim();
  const features = values['feature-columns'] === undefined ? undefined : String(values['feature-columns']).split(',').map((c) => c.trim()).filter((c) => c);
  if (label === undefined && features === undefined) return undefined;
  if (label === '') throw new Error('--label-column needs a column name.');
  if (features && !features.length) throw new Error('--feature-columns needs column names separated by commas, e.g. --feature-columns age,height.');
  return { ...(label ? { label } : {}), ...(features ? { features } : {}) };
}

/** `--validation-holdout last|seeded-random`: which rows the validation split takes. */
function validationHoldOutOf(values: OptionValues): ValidationHoldOut | undefined {
  const value = values['validation-holdout'];
  if (value === undefined) return undefined;
  const choices: Record<string, ValidationHoldOut> = { last: 'last', 'seeded-random': 'seededRandom' };
  const holdOut = choices[String(value)];
  if (!holdOut) throw new Error(`--validation-holdout ${String(value)}: use last (the last rows, as model.fit's validationSplit; the default) or seeded-random (a random fraction drawn from --seed).`);
  return holdOut;
}

/** A dataset.json: validated, its source resolved against its folder; --validation-split and --validation-holdout override its own. */
function describedDataRef(file: string, held: { validationSplit?: number; validationHoldOut?: ValidationHoldOut }): DataRef {
  let raw: unknown;
  try {
    raw = JSON.parse(readFileSync(file, 'utf8'));
  } catch (err) {
    if (err instanceof SyntaxError) throw new Error(`Dataset description ${file} is not valid JSON (${err.message}). Fix it, or pass the data file or folder itself as --data.`);
    throw explainFileError(err, 'Dataset description', file);
  }
  const dataset = parseDatasetDescription(raw, file);
  const source = dataset.source.startsWith('~/') ? dataset.source : resolve(dirname(file), dataset.source);
  return { kind: 'dataset', file, dataset: { ...dataset, source, ...held } };
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
  const doc = modelDocument(graph);
  const spec = trainingSpecFor(graph, doc, { loss });
  const evaluated = evalMetricsFor(spec.outputs, doc === undefined ? undefined : trainingConfigOf(doc));
  spec.notes.push(...evaluated.notes);
  const metrics = { metrics: evaluated.metrics };
  const arrays = modelArrays(graph, spec.outputs);
  if (data.kind === 'mnist') {
    // The digits travel with the agents; here only whether they fit the model can be checked.
    const mismatch = mnistMismatch(graph, arrays);
    if (mismatch) throw new Error(mismatch);
    return { data, losses: spec.outputs, ...metrics, trainSamples: MNIST_TRAIN, validationSamples: MNIST_TEST, notes: ['data: the bundled MNIST digits', ...spec.notes] };
  }
  let dataset: ReturnType<typeof openUserData>;
  try {
    dataset = openUserData(data, arrays, seed);
  } catch (err) {
    throw explainFileError(err, dataRole(data), dataPath(data));
  }
  try {
    const classes = dataset.classes && Object.keys(dataset.classes).length ? { classes: dataset.classes } : {};
    const coverage = classCoverage(arrays, dataset.classes, `Data ${dataPath(data)}`);
    return { data, losses: spec.outputs, ...metrics, trainSamples: dataset.train.size, validationSamples: dataset.validation.size, ...classes, notes: [`data: ${dataset.describe}`, ...coverage, ...spec.notes] };
  } finally {
    dataset.close();
  }
}

/** What a data reference is called in a message about its files: the option, or the description that names the source. */
function dataRole(data: DataRef): string {
  if (data.kind === 'dataset' && data.file) return `Data (the source of ${data.file})`;
  return 'Data (--data)';
}

function dataPath(data: DataRef): string {
  return data.kind === 'npy' ? data.dir : data.kind === 'dataset' ? data.dataset.source : data.kind;
}

/** The optimizer the options name, else the model file's own (training_config), else `fallback`. */
export function optimizerFrom(values: OptionValues, graph: ModelGraph, fallback: OptimizerConfig | undefined): OptimizerConfig | undefined {
  // Past 10 every optimizer Shoal has diverges at once (the loss is NaN after a step or two).
  const lr = numberOption(values, 'lr', { above: 0, max: 1e6, example: '0.001' });
  const momentum = numberOption(values, 'momentum', { min: 0, max: 1, example: '0.9' });
  const weightDecay = numberOption(values, 'weight-decay', { min: 0, max: 1, example: '0.004' });
  if (values.optimizer !== undefined) {
    return optimizerFromOptions(String(values.optimizer), lr, { momentum, nesterov: values.nesterov === true, weightDecay });
  }
  if (momentum !== undefined || weightDecay !== undefined || values.nesterov) {
    throw new Error('--momentum, --nesterov and --weight-decay go with --optimizer (e.g. --optimizer sgd --momentum 0.9, --optimizer adamw --weight-decay 0.01).');
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
