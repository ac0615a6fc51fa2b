import { z } from 'zod';
import { DATASET_FORMATS, DatasetDescriptionSchema } from '../data/datasetDescription.js';
import type { Diagnostic } from '../plan/diagnostics.js';
import { MAX_IMPORT_BYTES } from './modelImport.js';
import type { DataRef } from './trainingSetup.js';

/**
 * The studio's Data section asks the Node side what a dataset is before it trains on it: the path (a
 * file, a folder, a dataset.json) or a description, with the section's overrides, and the model the
 * plan names. The answer is what the section shows — counts, shapes against the model, class balance,
 * a few samples — and the resolved data reference Train sends.
 */

/** The Data section's fields that a diagnostic can stand beside. */
export const DATASET_FIELDS = ['source', 'format', 'labelColumn', 'featureColumns', 'validationSplit', 'pixels', 'imageSize', 'loss', 'model'] as const;
export type DatasetField = (typeof DATASET_FIELDS)[number];

export const DatasetChoiceSchema = z.object({
  /** A file or folder on this machine (absolute or ~/…), or a dataset.json. */
  source: z.string().trim().min(1).max(4096),
  /** Absent: from the file's name, or by looking inside a folder. */
  format: z.enum(DATASET_FORMATS).optional(),
  /** CSV/TSV: the label column (default: the last) and the feature columns (default: every other numeric one). */
  labelColumn: z.string().trim().min(1).max(500).optional(),
  featureColumns: z.array(z.string().trim().min(1).max(500)).min(1).max(10_000).optional(),
  validationSplit: z.number().gt(0).lt(1).optional(),
  /** Images: pixels scaled to 0–1 ('unit', the default) or kept 0–255; the size to resize to for a model of any size. */
  pixels: z.enum(['unit', 'byte']).optional(),
  imageSize: z.tuple([z.number().int().positive().max(8192), z.number().int().positive().max(8192)]).optional(),
}).strict();
export type DatasetChoice = z.infer<typeof DatasetChoiceSchema>;

export const InspectDatasetRequestSchema = z.object({
  /** What the plan names: a zoo model, or a model file the studio imported. */
  model: z.string().trim().min(1).max(4096),
  /** The loss picked for outputs the model file gives none (it decides whether labels are class ids). */
  loss: z.string().trim().min(1).max(100).optional(),
  /** The section's fields, or a whole description (a dataset.json's content with `source` absolute). */
  choice: DatasetChoiceSchema.optional(),
  description: DatasetDescriptionSchema.optional(),
}).strict().refine((r) => (r.choice === undefined) !== (r.description === undefined), { message: 'give either choice or description' });
export type InspectDatasetRequest = z.infer<typeof InspectDatasetRequestSchema>;

/** One model input or output against the data that feeds it. */
export interface FeedCheck {
  side: 'input' | 'output';
  layer: string;
  /** Per sample, as the model takes it (-1: any size). */
  modelShape: number[];
  /** Per sample, as the data gives it, when it could be opened. */
  dataShape?: number[];
  status: 'match' | 'mismatch' | 'unknown';
  /** Which columns, key or array feed it, and how (e.g. "label 'species' (3 classes)"). */
  note?: string;
}

export interface ClassBalance {
  output: string;
  names: string[];
  counts: number[];
  /** Samples counted; fewer than the dataset's when it is large (the first ones). */
  counted: number;
}

export type DatasetSamples =
  | { kind: 'images'; images: Array<{ label: string; file: string; dataUrl: string; width: number; height: number }> }
  | { kind: 'table'; columns: string[]; rows: string[][] }
  | { kind: 'none' };

export interface DatasetInspection {
  /** The data as resolved: absolute path and format. */
  source: string;
  format?: (typeof DATASET_FORMATS)[number];
  /** The reference Train sends, when the data could be described (even if it does not fit the model). */
  ref?: DataRef;
  /** The reader's summary, when the data opened against the model. */
  describe?: string;
  counts?: { train: number; validation: number };
  /** CSV/TSV header, JSON Lines keys or .npz arrays: what the label/feature fields can name. */
  columns?: string[];
  feeds: FeedCheck[];
  classes: ClassBalance[];
  samples: DatasetSamples;
  /** The validator's and the readers' findings; `where.field` is one of DATASET_FIELDS, `file`/`row` where known. */
  diagnostics: Array<Diagnostic & { where: Diagnostic['where'] & { file?: string; row?: number } }>;
}

/** A data file dropped on the browser shell, handed to the Node side to store. */
export const MAX_DATA_UPLOAD_BYTES = MAX_IMPORT_BYTES;
export const DATA_UPLOAD_NAME = /^(?!\.)[^/\\\0]{1,200}\.(csv|tsv|tab|jsonl|ndjson|npz)$/i;
export const UploadDataFileRequestSchema = z.object({
  name: z.string().regex(DATA_UPLOAD_NAME, 'a data file is a plain .csv, .tsv, .jsonl, .ndjson or .npz file name'),
  base64: z
    .string()
    .max(Math.ceil(MAX_DATA_UPLOAD_BYTES / 3) * 4, `a data file is at most ${MAX_DATA_UPLOAD_BYTES / 2 ** 20} MiB`)
    .regex(/^[A-Za-z0-9+/]*={0,2}$/, 'not base64'),
}).strict();
export type UploadDataFileRequest = z.infer<typeof UploadDataFileRequestSchema>;
