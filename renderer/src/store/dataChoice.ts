import type { DatasetFormat } from '../../../engine/data/datasetDescription';
import type { ModelGraph } from '../../../engine/model/graph';
import type { DatasetChoice, DatasetInspection } from '../../../engine/protocol/datasetInspect';
import type { DataRef } from '../../../engine/protocol/trainingSetup';

/**
 * What Train trains on, as the plan panel's Data section edits it: the bundled MNIST digits (the
 * built-in models' data), synthetic data of the model's shapes, a NumPy folder on this machine, or a
 * dataset — a file or folder (CSV/TSV, image class folders, JSON Lines, .npz, .npy, a dataset.json)
 * that the Node side inspects and resolves. The fields of every kind are kept, so switching back and
 * forth loses nothing typed.
 */
export interface DataChoice {
  kind: DataRef['kind'];
  /** The NumPy folder's path on this machine (absolute, or ~/…). */
  dir: string;
  /** Fraction held out for validation when the folder has no val/ subfolder; 0: none. */
  validationSplit: number;
  /** Synthetic training samples (a quarter as many more for validation). */
  samples: number;
  /** A Keras loss name for outputs the model file gives none; '' picks it from the file or the output. */
  loss: string;
  /** The dataset's fields (kind 'dataset'); its validation split is `validationSplit`. */
  dataset: DatasetFields;
  /** The Node side's last inspection of the dataset, with what it answered (inspectionKey). */
  inspected?: { key: string; inspection?: DatasetInspection; error?: string };
}

export interface DatasetFields {
  /** A file or folder on this machine (absolute or ~/…), or a dropped file the studio stored. */
  source: string;
  /** '' detects it: by the file's name, or by looking inside a folder. */
  format: DatasetFormat | '';
  /** CSV/TSV: '' takes the last column as the label and every other numeric column as a feature. */
  labelColumn: string;
  /** Comma-separated, as typed; '' takes every numeric column but the label. */
  featureColumns: string;
  pixels: 'unit' | 'byte';
  /** Images for a model of any size: [height, width]; 0 leaves it to the model. */
  imageSize: [number, number];
}

export const DEFAULT_DATASET: DatasetFields = { source: '', format: '', labelColumn: '', featureColumns: '', pixels: 'unit', imageSize: [0, 0] };

export const DATA_KINDS: Array<{ value: DataRef['kind']; label: string }> = [
  { value: 'mnist', label: 'MNIST digits' },
  { value: 'synthetic', label: 'Synthetic' },
  { value: 'npy', label: 'NumPy folder' },
  { value: 'dataset', label: 'Dataset (file or folder)' },
];

/** The five losses `shoal train --loss` takes, by their Keras names. */
export const LOSS_NAMES = ['sparse_categorical_crossentropy', 'categorical_crossentropy', 'binary_crossentropy', 'mse', 'mae'] as const;

export const DEFAULT_DATA: DataChoice = { kind: 'mnist', dir: '', validationSplit: 0.2, samples: 1024, loss: '', dataset: DEFAULT_DATASET };

/** Whether a model is one opened from a file (its own data) rather than a built-in one (MNIST). */
export const isFileModel = (model: ModelGraph | undefined): boolean => !!model?.source || (!!model && model.numClasses === undefined);

/** The choice a newly opened model starts with: MNIST for a built-in model, a NumPy folder for a model file (the typed path kept). */
export function dataForModel(choice: DataChoice, model: ModelGraph): DataChoice {
  if (isFileModel(model)) return choice.kind === 'mnist' ? { ...choice, kind: 'npy' } : choice;
  return { ...choice, kind: 'mnist', loss: '' };
}

/** The data reference a training request carries, or why the choice is not complete yet. */
export function dataRefOf(choice: DataChoice): { ref: DataRef } | { why: string } {
  if (choice.kind === 'mnist') return { ref: { kind: 'mnist' } };
  if (choice.kind === 'synthetic') return { ref: { kind: 'synthetic', samples: choice.samples, validation: Math.max(1, Math.round(choice.samples / 4)) } };
  if (choice.kind === 'dataset') return datasetRefOf(choice);
  const dir = choice.dir.trim();
  if (!dir) return { why: 'Choose the data: type the path of a NumPy folder on this machine.' };
  if (!dir.startsWith('/') && !dir.startsWith('~/') && !/^[A-Za-z]:[\\/]/.test(dir)) return { why: 'The data folder needs its full path (e.g. /home/me/data or ~/data).' };
  return { ref: { kind: 'npy', dir, ...(choice.validationSplit > 0 ? { validationSplit: choice.validationSplit } : {}) } };
}

/** A choice back from a saved data reference (a project), over the current one. */
export function choiceFromRef(current: DataChoice, ref: DataRef | undefined, loss: string | undefined): DataChoice {
  const next: DataChoice = { ...current, loss: loss ?? '' };
  if (!ref) return next;
  if (ref.kind === 'synthetic') return { ...next, kind: 'synthetic', samples: ref.samples };
  if (ref.kind === 'npy') return { ...next, kind: 'npy', dir: ref.dir, validationSplit: ref.validationSplit ?? 0 };
  if (ref.kind === 'dataset') {
    const d = ref.dataset;
    const validationSplit = d.validationSplit ?? 0;
    // A dataset.json keeps its own fields: the path names it, and it is read again.
    if (ref.file) return { ...next, kind: 'dataset', validationSplit, dataset: { ...DEFAULT_DATASET, source: ref.file }, inspected: undefined };
    const table = d.format === 'csv' || d.format === 'tsv';
    const dataset: DatasetFields = {
      source: d.source,
      format: d.format,
      labelColumn: table ? (d.outputs?.[0]?.columns?.[0] ?? '') : '',
      featureColumns: table ? (d.inputs?.[0]?.columns ?? []).join(', ') : '',
      pixels: d.preprocessing?.pixels ?? 'unit',
      imageSize: d.preprocessing?.imageSize ?? [0, 0],
    };
    return { ...next, kind: 'dataset', validationSplit, dataset, inspected: undefined };
  }
  return { ...next, kind: 'mnist' };
}

/** The dataset fields as the Node side's inspection takes them, or why they are not complete. */
export function datasetChoiceOf(choice: DataChoice): { choice: DatasetChoice } | { why: string } {
  const d = choice.dataset;
  const source = d.source.trim();
  if (!source) return { why: 'Choose the data: type the path of a file or folder on this machine, or drop a file on the Data section.' };
  const [height, width] = d.imageSize;
  const features = d.featureColumns.split(',').map((c) => c.trim()).filter((c) => c);
  return {
    choice: {
      source,
      ...(d.format ? { format: d.format } : {}),
      ...(d.labelColumn.trim() ? { labelColumn: d.labelColumn.trim() } : {}),
      ...(features.length ? { featureColumns: features } : {}),
      ...(choice.validationSplit > 0 ? { validationSplit: choice.validationSplit } : {}),
      ...(d.pixels === 'byte' ? { pixels: 'byte' as const } : {}),
      ...(height > 0 && width > 0 ? { imageSize: [height, width] as [number, number] } : {}),
    },
  };
}

/** What an inspection is of: the dataset fields, the loss (which decides how labels are read) and the model. */
export function inspectionKey(choice: DatasetChoice, loss: string, model: string): string {
  return JSON.stringify([choice, loss, model]);
}

/** Whether an inspection answered these dataset fields (whatever the model: a new model is inspected again). */
function answers(key: string, choice: DatasetChoice, loss: string): boolean {
  return key.startsWith(inspectionKey(choice, loss, '').slice(0, -3));
}

/** A dataset trains once inspected, on the reference the Node side resolved, when it found no error. */
function datasetRefOf(choice: DataChoice): { ref: DataRef } | { why: string } {
  const fields = datasetChoiceOf(choice);
  if ('why' in fields) return fields;
  const inspected = choice.inspected;
  if (!inspected || !answers(inspected.key, fields.choice, choice.loss)) return { why: 'Inspecting the data…' };
  if (inspected.error) return { why: `Could not inspect the data: ${inspected.error}` };
  const error = inspected.inspection?.diagnostics.find((d) => d.severity === 'error');
  if (error) return { why: `Data: ${error.message}` };
  const ref = inspected.inspection?.ref;
  return ref ? { ref } : { why: 'Inspecting the data…' };
}
