import { z } from 'zod';
import { DATASET_FORMATS, DatasetDescriptionSchema } from '../data/datasetDescription.js';
import { DiagnosticSchema } from '../plan/diagnostics.js';
import { MAX_IMPORT_BYTES } from './modelImport.js';
import { DataRefSchema } from './trainingSetup.js';

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
export const FeedCheckSchema = z.object({
  side: z.enum(['input', 'output']),
  layer: z.string(),
  /** Per sample, as the model takes it (-1: any size). */
  modelShape: z.array(z.number()),
  /** Per sample, as the data gives it, when it could be opened. */
  dataShape: z.array(z.number()).optional(),
  status: z.enum(['match', 'mismatch', 'unknown']),
  /** Which columns, key or array feed it, and how (e.g. "label 'species' (3 classes)"). */
  note: z.string().optional(),
});
export type FeedCheck = z.infer<typeof FeedCheckSchema>;

export const ClassBalanceSchema = z.object({
  output: z.string(),
  names: z.array(z.string()),
  counts: z.array(z.number()),
  /** Samples counted; fewer than the dataset's when it is large (the first ones). */
  counted: z.number(),
});
export type ClassBalance = z.infer<typeof ClassBalanceSchema>;

export const DatasetSamplesSchema = z.discriminatedUnion('kind', [
  z.object({ kind: z.literal('images'), images: z.array(z.object({ label: z.string(), file: z.string(), dataUrl: z.string(), width: z.number(), height: z.number() })) }),
  z.object({ kind: z.literal('table'), columns: z.array(z.string()), rows: z.array(z.array(z.string())) }),
  z.object({ kind: z.literal('none') }),
]);
export type DatasetSamples = z.infer<typeof DatasetSamplesSchema>;

export const DatasetInspectionSchema = z.object({
  /** The data as resolved: absolute path and format. */
  source: z.string(),
  format: z.enum(DATASET_FORMATS).optional(),
  /** The reference Train sends, when the data could be described (even if it does not fit the model). */
  ref: DataRefSchema.optional(),
  /** The reader's summary, when the data opened against the model. */
  describe: z.string().optional(),
  counts: z.object({ train: z.number(), validation: z.number() }).optional(),
  /** CSV/TSV header, JSON Lines keys or .npz arrays: what the label/feature fields can name. */
  columns: z.array(z.string()).optional(),
  feeds: z.array(FeedCheckSchema),
  classes: z.array(ClassBalanceSchema),
  samples: DatasetSamplesSchema,
  /** The validator's and the readers' findings; `where.field` is one of DATASET_FIELDS, `file`/`row` where known. */
  diagnostics: z.array(DiagnosticSchema.extend({ where: DiagnosticSchema.shape.where.extend({ file: z.string().optional(), row: z.number().optional() }) })),
});
export type DatasetInspection = z.infer<typeof DatasetInspectionSchema>;

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
