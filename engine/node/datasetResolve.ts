import { existsSync, readFileSync, statSync } from 'node:fs';
import { dirname, isAbsolute, join, resolve } from 'node:path';
import { formatOfFileName, type DatasetDescription, type DatasetFormat } from '../data/datasetDescription.js';
import { validateDatasetDescription } from '../data/validateDataset.js';
import type { DatasetChoice, DatasetField, DatasetInspection } from '../protocol/datasetInspect.js';
import type { DataRef } from '../protocol/trainingSetup.js';
import { hostPath } from '../wire/hostPath.js';
import { isImageFolder } from '../wire/data/imageFolder.js';

export type DatasetDiagnostic = DatasetInspection['diagnostics'][number];

/** What the section's fields (or a description) resolve to: the description Train uses, or why there is none. */
export interface ResolvedDataset {
  source: string;
  format?: DatasetFormat;
  ref?: DataRef;
  /** The dataset.json the description came from, if any: its findings concern that file. */
  file?: string;
  diagnostics: DatasetDiagnostic[];
}

const error = (code: string, field: DatasetField, message: string, hint: string, extra: { file?: string; row?: number } = {}): DatasetDiagnostic => ({ severity: 'error', code, message, hint, where: { field, ...extra } });

/**
 * Turn the Data section's fields into a dataset description, as `shoal train --data` does for a path:
 * a dataset.json (beside the data, or named) is read and validated; otherwise the format comes from the
 * override, the file's name, or a folder's content (class folders of images, else .npy files). The
 * description is then judged by the validator, its findings placed on the section's fields.
 */
export function resolveDatasetChoice(choice: DatasetChoice): ResolvedDataset {
  const source = hostPath(choice.source.trim());
  if (!isAbsolute(source)) return { source, diagnostics: [error('dataset-source-relative', 'source', `"${choice.source}" is not a full path.`, 'Give the file or folder\'s full path on this machine (e.g. /home/me/data.csv or ~/data).')] };
  if (!existsSync(source)) return { source, diagnostics: [error('dataset-source-missing', 'source', `${source} does not exist.`, 'Check the path, or drop the file on the Data section to upload it.')] };
  const isDir = statSync(source).isDirectory();
  const described = isDir && existsSync(join(source, 'dataset.json')) ? join(source, 'dataset.json') : !isDir && /\.json$/i.test(source) ? source : undefined;
  if (described) return fromDatasetJson(described, choice);

  const format = choice.format ?? (isDir ? (isImageFolder(source) ? 'images' : 'npy') : formatOfFileName(source));
  if (!format) {
    return { source, diagnostics: [error('dataset-format-unknown', 'format', `Shoal cannot tell the format of ${source} by its name.`, 'Pick the format (CSV, TSV, JSON Lines, .npz), or rename the file to .csv, .tsv, .jsonl or .npz.')] };
  }
  const diagnostics: DatasetDiagnostic[] = [];
  const table = format === 'csv' || format === 'tsv';
  if (!table && (choice.labelColumn || choice.featureColumns)) {
    diagnostics.push({ severity: 'warning', code: 'dataset-columns-unused', message: `Label and feature columns apply to CSV/TSV tables; this is ${format} data.`, hint: 'Clear the columns, or pick the CSV/TSV format.', where: { field: choice.labelColumn ? 'labelColumn' : 'featureColumns' } });
  }
  const preprocessing = format === 'images' && (choice.pixels || choice.imageSize) ? { ...(choice.pixels ? { pixels: choice.pixels } : {}), ...(choice.imageSize ? { imageSize: choice.imageSize } : {}) } : undefined;
  const description: DatasetDescription = {
    format,
    source,
    ...(table && choice.featureColumns ? { inputs: [{ columns: choice.featureColumns }] } : {}),
    ...(table && choice.labelColumn ? { outputs: [{ columns: [choice.labelColumn] }] } : {}),
    ...(choice.validationSplit ? { validationSplit: choice.validationSplit } : {}),
    ...(preprocessing ? { preprocessing } : {}),
  };
  return judged(description, undefined, diagnostics);
}

/** A whole description given (a project's, or a dataset.json's content): judged as it is. */
export function resolveDescription(description: DatasetDescription): ResolvedDataset {
  return judged({ ...description, source: hostPath(description.source) }, undefined, []);
}

function fromDatasetJson(file: string, choice: DatasetChoice): ResolvedDataset {
  let raw: unknown;
  try {
    raw = JSON.parse(readFileSync(file, 'utf8'));
  } catch (err) {
    return { source: file, file, diagnostics: [error('dataset-json-unreadable', 'source', `Cannot read ${file}: ${(err as Error).message}`, 'Fix the JSON (one object with format and source), or pick the data file itself.', { file })] };
  }
  const split = choice.validationSplit ? { validationSplit: choice.validationSplit } : {};
  if (typeof raw === 'object' && raw !== null && typeof (raw as { source?: unknown }).source === 'string') {
    const given = (raw as { source: string }).source;
    raw = { ...raw, source: given.startsWith('~/') ? hostPath(given) : resolve(dirname(file), given), ...split };
  }
  return judged(raw, file, []);
}

/** The validator's findings on the section's fields; the reference when there is no error. */
function judged(raw: unknown, file: string | undefined, diagnostics: DatasetDiagnostic[]): ResolvedDataset {
  const { description, diagnostics: found } = validateDatasetDescription(raw);
  for (const d of found) {
    const path = d.where.field ?? '';
    // A dataset.json's findings concern the file: they stand beside the path, naming it.
    const field: DatasetField = file ? 'source' : fieldOfDescriptionPath(path);
    diagnostics.push({ ...d, message: file ? `${file}: ${d.message}` : d.message, where: { field, ...(file ? { file } : {}) } });
  }
  const source = description?.source ?? (typeof (raw as { source?: unknown })?.source === 'string' ? (raw as { source: string }).source : file ?? '');
  const ref: DataRef | undefined = description ? { kind: 'dataset', dataset: description, ...(file ? { file } : {}) } : undefined;
  return { source, format: description?.format, ref, file, diagnostics };
}

/** A description's field path ("outputs.0.columns") to the section's field it is set by. */
export function fieldOfDescriptionPath(path: string): DatasetField {
  if (path.startsWith('outputs')) return 'labelColumn';
  if (path.startsWith('inputs')) return 'featureColumns';
  if (path.startsWith('preprocessing.pixels')) return 'pixels';
  if (path.startsWith('preprocessing.imageSize')) return 'imageSize';
  if (path.startsWith('validationSplit')) return 'validationSplit';
  if (path.startsWith('format')) return 'format';
  return 'source';
}
