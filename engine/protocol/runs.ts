import { z } from 'zod';
import type { Plan } from '../plan/plan.js';
import type { ValidationResult } from './evaluation.js';
import type { JobState } from './events.js';

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

export interface RunSummary {
  id: string;
  createdAt: string;
  model: string;
  agents: number;
  steps: number;
  /** e.g. "2 stages × 2 replicas, gpipe, 4 micro-batches". */
  planLabel: string;
  /** `incomplete`: the run left no final event and is not running in this studio (crashed or stopped). */
  state: JobState | 'incomplete';
  /** Steps the run reported (the last step event + 1). */
  stepsDone: number;
  validationAccuracy?: number;
  checkpoints: number;
  /** Whether the run folder has the coordinator's event history (events.jsonl). */
  hasHistory: boolean;
  /** What the user called the run, its tags and notes (run.meta.json); absent: never named. */
  name?: string;
  tags: string[];
  notes?: string;
  /** Name of the data it trained on (job.json's dataset record). */
  dataset?: string;
  /** Hosts the run used: a deployed run's hosts (deploy.json), else this machine. */
  hosts: string[];
  /** Training time: the final event's, else the elapsed time of the last step. */
  durationMs?: number;
  /** Loss of the last step the run reported. */
  finalLoss?: number;
  validationLoss?: number;
  /** The final (else the latest) evaluation's metrics by name. */
  metrics?: Record<string, number>;
}

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

export interface RunDeletion {
  id: string;
  /** Where the folder went; absent when it was removed for good. */
  trashedTo?: string;
}

/**
 * Which data a run trained on: enough to tell two runs' data apart without hashing it all. The
 * checksum covers the data's description and, for data on this machine, each file's path, size and
 * modification time (`checksumOf` says which).
 */
export interface DatasetRecord {
  name: string;
  /** e.g. "csv /data/iris.csv (validation split 0.2)". */
  description: string;
  /** sha256, hex. */
  checksum: string;
  checksumOf: string;
  trainSamples: number;
  validationSamples: number;
}

export interface RunCurves {
  step: number[];
  epoch: number[];
  loss: number[];
  samplesPerSec: number[];
  stepMs: number[];
  elapsedMs: number[];
}

export interface RunDetail {
  summary: RunSummary;
  plan: Plan;
  curves: RunCurves;
  /** Every evaluation of the validation set; the last carries the confusion matrix of a classifier. */
  evals: Array<{ step: number; epoch: number } & ValidationResult>;
  final?: ValidationResult & { steps: number; seconds: number; samplesPerSec: number; backends: string[] };
  /** The data the run trained on, as job.json records it (absent in runs written before it was recorded). */
  dataset?: DatasetRecord;
  /** Steps at which the agents changed (resize, lost agent): markers on the curves. */
  membership: Array<{ step: number; generation: number; reason: string; agents: number }>;
  /** Median measured step time (ms) over the steps after the first two (warm-up), if any. */
  measuredStepMs?: number;
  /** The cost model's step time for the plan on this machine: datasheet speeds, and calibrated by the run's own profile.json when it has one. */
  predictedStepMs?: number;
  calibratedStepMs?: number;
  /** The last error or status message of a failed or stopped run. */
  message?: string;
}

/** What a weights export wrote: a tfjs LayersModel folder (model.json + one weights file). */
export interface WeightsExport {
  /** Folder holding model.json and the weights binary. */
  dir: string;
  files: string[];
  model: string;
  /** Optimizer steps the exported weights were trained for. */
  step: number;
  checkpoint: string;
  bytes: number;
}

/** An exported file handed to the browser for download (base64: the studio API speaks JSON). */
export interface ExportedFile {
  name: string;
  base64: string;
}
