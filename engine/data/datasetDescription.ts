import { z } from 'zod';

/**
 * A dataset described once: where it is, its format, which columns / keys / arrays feed which model
 * inputs and outputs, the validation split, and the preprocessing that must be the same on every host.
 * It is what a `dataset.json` beside the data holds, and what `--data table.csv --label-column y` means
 * (the CLI writes the same description). Paths in a `dataset.json` are relative to its folder.
 */

export const DATASET_FORMATS = ['npy', 'npz', 'csv', 'tsv', 'images', 'jsonl'] as const;
export type DatasetFormat = (typeof DATASET_FORMATS)[number];

/**
 * What feeds one model input or output. `layer` is the input/output layer's name (omit it when the
 * model has one input and one output). Exactly one of: `columns` (CSV/TSV header names), `key` (a JSON
 * Lines key), `array` (an .npz array name).
 */
export const DatasetFeedSchema = z.object({
  layer: z.string().min(1).optional(),
  columns: z.array(z.string().min(1)).min(1).optional(),
  key: z.string().min(1).optional(),
  array: z.string().min(1).optional(),
}).strict();
export type DatasetFeed = z.infer<typeof DatasetFeedSchema>;

/** A value per feature, or one value for all of them. */
const PerFeature = z.union([z.number(), z.array(z.number()).min(1)]);

export const DatasetPreprocessingSchema = z.object({
  /** Features become (x - mean) / std (CSV/TSV, .npy/.npz float inputs, image pixels after scaling). */
  normalize: z.object({ mean: PerFeature, std: PerFeature }).strict().optional(),
  /** Image pixels: 'unit' scales to [0, 1] (the default), 'byte' keeps 0–255 for models that rescale themselves. */
  pixels: z.enum(['unit', 'byte']).optional(),
  /** Images are resized (bilinear) to the model's input; give [height, width] when the model takes any size. */
  imageSize: z.tuple([z.number().int().positive(), z.number().int().positive()]).optional(),
  /** How class labels reach the loss: class ids ('integer') or one-hot rows ('oneHot'); default: what the model's loss takes. */
  labels: z.enum(['integer', 'oneHot']).optional(),
  /** Token sequences shorter than the model's length are padded with `padValue`, longer ones cut: at the end ('post', the default) or the start ('pre', Keras's pad_sequences). */
  padding: z.enum(['post', 'pre']).optional(),
  truncating: z.enum(['post', 'pre']).optional(),
  padValue: z.number().int().optional(),
}).strict();
export type DatasetPreprocessing = z.infer<typeof DatasetPreprocessingSchema>;

/** Which rows a validation split holds out (engine/wire/data/heldOut.ts). */
export const ValidationHoldOutSchema = z.enum(['last', 'seededRandom']);
export type ValidationHoldOut = z.infer<typeof ValidationHoldOutSchema>;

export const DatasetDescriptionSchema = z.object({
  format: z.enum(DATASET_FORMATS),
  /** The file or folder, absolute or relative to the dataset.json's folder. */
  source: z.string().min(1),
  name: z.string().optional(),
  /** Which data feeds each model input (default: every numeric column but the label; `tokens`; `x`). */
  inputs: z.array(DatasetFeedSchema).min(1).optional(),
  /** Which data is compared with each model output (default: the last column; `label`; `y`). */
  outputs: z.array(DatasetFeedSchema).min(1).optional(),
  /** The fraction held out for validation: the last rows, as model.fit takes it, unless validationHoldOut says otherwise. */
  validationSplit: z.number().gt(0).lt(1).optional(),
  /** Which rows validationSplit holds out: 'last' (model.fit's, the default) or 'seededRandom' (drawn from the run's seed). */
  validationHoldOut: ValidationHoldOutSchema.optional(),
  preprocessing: DatasetPreprocessingSchema.optional(),
  /**
   * Where a deployed job's hosts find the data: 'upload' (the default) sends it from this machine to
   * each host once per content; 'hosts' means `source` is already at that same path on every host (a
   * shared file system, or copies), so nothing is uploaded and deploy compares each host's copy with
   * this machine's. A local job reads it in place either way.
   */
  location: z.enum(['upload', 'hosts']).optional(),
}).strict();
export type DatasetDescription = z.infer<typeof DatasetDescriptionSchema>;

/** The format a path implies from its name (a folder is 'npy' or 'images': decided by looking inside). */
export function formatOfFileName(name: string): DatasetFormat | undefined {
  const lower = name.toLowerCase();
  if (lower.endsWith('.csv')) return 'csv';
  if (lower.endsWith('.tsv') || lower.endsWith('.tab')) return 'tsv';
  if (lower.endsWith('.jsonl') || lower.endsWith('.ndjson')) return 'jsonl';
  if (lower.endsWith('.npz')) return 'npz';
  return undefined;
}
