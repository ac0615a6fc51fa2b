import { z } from 'zod';
import { PlanSchema } from '../plan/plan.js';
import { validationFields } from './evaluation.js';
import { JobStateSchema } from './events.js';

/**
 * Past runs as the studio lists and opens them: read from the run folders on disk (job.json, the
 * coordinator's events.jsonl, checkpoints/), so the history outlives the studio.
 */

/** A run id is the name of its folder under the runs root: no separators, no `..`. */
export const RunIdSchema = z
  .string()
  .min(1)
  .max(200)
  .regex(/^[A-Za-z0-9][A-Za-z0-9._-]*$/, 'a run id is a folder name (letters, digits, . _ -)');

export const RunSummarySchema = z.object({
  id: z.string(),
  createdAt: z.string(),
  model: z.string(),
  agents: z.number(),
  steps: z.number(),
  /** e.g. "2 stages × 2 replicas, gpipe, 4 micro-batches". */
  planLabel: z.string(),
  /** `incomplete`: the run left no final event and is not running in this studio (crashed or stopped). */
  state: z.union([JobStateSchema, z.literal('incomplete')]),
  /** Steps the run reported (the last step event + 1). */
  stepsDone: z.number(),
  validationAccuracy: z.number().optional(),
  checkpoints: z.number(),
  /** Whether the run folder has the coordinator's event history (events.jsonl). */
  hasHistory: z.boolean(),
  /** What the user called the run, its tags and notes (run.meta.json); absent: never named. */
  name: z.string().optional(),
  tags: z.array(z.string()),
  notes: z.string().optional(),
  /** Name of the data it trained on (job.json's dataset record). */
  dataset: z.string().optional(),
  /** Hosts the run used: a deployed run's hosts (deploy.json), else this machine. */
  hosts: z.array(z.string()),
  /** Training time: the final event's, else the elapsed time of the last step. */
  durationMs: z.number().optional(),
  /** Loss of the last step the run reported. */
  finalLoss: z.number().optional(),
  validationLoss: z.number().optional(),
  /** The final (else the latest) evaluation's metrics by name. */
  metrics: z.record(z.string(), z.number()).optional(),
});
export type RunSummary = z.infer<typeof RunSummarySchema>;

/** Limits of what a user may write into a run's name, tags and notes (run.meta.json). */
export const RUN_META_LIMITS = { name: 120, tag: 40, tags: 20, notes: 4000 } as const;

/**
 * An edit of a run's name, tags or notes; a field left out is kept, an empty name or notes clears it.
 * Tags are trimmed and kept in order, without duplicates.
 */
export const RunMetaUpdateSchema = z.strictObject({
  name: z.string().trim().max(RUN_META_LIMITS.name, `a run name has at most ${RUN_META_LIMITS.name} characters`).regex(/^[^\n\r\t]*$/, 'a run name is one line').optional(),
  tags: z
    .array(
      z
        .string()
        .trim()
        .min(1, 'a tag is not empty')
        .max(RUN_META_LIMITS.tag, `a tag has at most ${RUN_META_LIMITS.tag} characters`)
        .regex(/^[^,\n\r\t]+$/, 'a tag has no comma or line break'),
    )
    .max(RUN_META_LIMITS.tags, `a run has at most ${RUN_META_LIMITS.tags} tags`)
    .optional(),
  notes: z.string().max(RUN_META_LIMITS.notes, `notes have at most ${RUN_META_LIMITS.notes} characters`).optional(),
});
export type RunMetaUpdate = z.infer<typeof RunMetaUpdateSchema>;

/** Delete a run: its folder goes to Shoal's trash (beside the runs folder), or is removed for good. */
export const DeleteRunOptionsSchema = z.strictObject({ permanently: z.boolean().optional() });
export type DeleteRunOptions = z.infer<typeof DeleteRunOptionsSchema>;

export const RunDeletionSchema = z.object({
  id: z.string(),
  /** Where the folder went; absent when it was removed for good. */
  trashedTo: z.string().optional(),
});
export type RunDeletion = z.infer<typeof RunDeletionSchema>;

/**
 * Which data a run trained on: enough to tell two runs' data apart without hashing it all. The
 * checksum covers the data's description and, for data on this machine, each file's path, size and
 * modification time (`checksumOf` says which).
 */
export const DatasetRecordSchema = z.object({
  name: z.string(),
  /** e.g. "csv /data/iris.csv (validation split 0.2)". */
  description: z.string(),
  /** sha256, hex. */
  checksum: z.string(),
  checksumOf: z.string(),
  trainSamples: z.number(),
  validationSamples: z.number(),
});
export type DatasetRecord = z.infer<typeof DatasetRecordSchema>;

export const RunCurvesSchema = z.object({
  step: z.array(z.number()),
  epoch: z.array(z.number()),
  loss: z.array(z.number()),
  samplesPerSec: z.array(z.number()),
  stepMs: z.array(z.number()),
  elapsedMs: z.array(z.number()),
});
export type RunCurves = z.infer<typeof RunCurvesSchema>;

export const RunDetailSchema = z.object({
  summary: RunSummarySchema,
  plan: PlanSchema,
  curves: RunCurvesSchema,
  /** Every evaluation of the validation set; the last carries the confusion matrix of a classifier. */
  evals: z.array(z.object({ step: z.number(), epoch: z.number(), ...validationFields })),
  final: z.object({ ...validationFields, steps: z.number(), seconds: z.number(), samplesPerSec: z.number(), backends: z.array(z.string()) }).optional(),
  /** The data the run trained on, as job.json records it (absent in runs written before it was recorded). */
  dataset: DatasetRecordSchema.optional(),
  /** Steps at which the agents changed (resize, lost agent): markers on the curves. */
  membership: z.array(z.object({ step: z.number(), generation: z.number(), reason: z.string(), agents: z.number() })),
  /** Median measured step time (ms) over the steps after the first two (warm-up), if any. */
  measuredStepMs: z.number().optional(),
  /** The cost model's step time for the plan on this machine: datasheet speeds, and calibrated by the run's own profile.json when it has one. */
  predictedStepMs: z.number().optional(),
  calibratedStepMs: z.number().optional(),
  /** The last error or status message of a failed or stopped run. */
  message: z.string().optional(),
});
export type RunDetail = z.infer<typeof RunDetailSchema>;

/** What a weights export wrote: a tfjs LayersModel folder (model.json + one weights file). */
export const WeightsExportSchema = z.object({
  /** Folder holding model.json and the weights binary. */
  dir: z.string(),
  files: z.array(z.string()),
  model: z.string(),
  /** Optimizer steps the exported weights were trained for. */
  step: z.number(),
  checkpoint: z.string(),
  bytes: z.number(),
});
export type WeightsExport = z.infer<typeof WeightsExportSchema>;

/** An exported file handed to the browser for download (base64: the studio API speaks JSON). */
export const ExportedFileSchema = z.object({ name: z.string(), base64: z.string() });
export type ExportedFile = z.infer<typeof ExportedFileSchema>;
