import type { ModelGraph } from '../../../engine/model/graph';
import type { DataRef } from '../../../engine/protocol/trainingSetup';

/**
 * What Train trains on, as the plan panel's Data section edits it: the bundled MNIST digits (the
 * built-in models' data), synthetic data of the model's shapes, or a NumPy folder on this machine. The
 * fields of every kind are kept, so switching back and forth loses nothing typed.
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
}

export const DATA_KINDS: Array<{ value: DataRef['kind']; label: string }> = [
  { value: 'mnist', label: 'MNIST digits' },
  { value: 'synthetic', label: 'Synthetic' },
  { value: 'npy', label: 'NumPy folder' },
];

/** The five losses `shoal train --loss` takes, by their Keras names. */
export const LOSS_NAMES = ['sparse_categorical_crossentropy', 'categorical_crossentropy', 'binary_crossentropy', 'mse', 'mae'] as const;

export const DEFAULT_DATA: DataChoice = { kind: 'mnist', dir: '', validationSplit: 0.2, samples: 1024, loss: '' };

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
  return { ...next, kind: 'mnist' };
}
