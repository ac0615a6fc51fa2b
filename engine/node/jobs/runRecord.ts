import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { z } from 'zod';
import { PlanSchema } from '../../plan/plan.js';
import { DatasetRecordSchema } from '../../protocol/runs.js';
import { TrainingSetupSchema, withEarlierHoldOut } from '../../protocol/trainingSetup.js';
import { readRecord, type RecordFormat } from '../../protocol/versionedRecord.js';

/** The version of job.json this Shoal writes; change it, with an upgrade, when RunRecordSchema changes. */
export const RUN_RECORD_VERSION = 2;

/** What a run folder's job.json says was asked: written once when the run starts. */
export const RunRecordSchema = z.object({
  version: z.literal(RUN_RECORD_VERSION),
  jobId: z.string(),
  createdAt: z.string(),
  model: z.string(),
  plan: PlanSchema,
  agents: z.number(),
  steps: z.number(),
  /** The data and losses the job trained with (absent: the built-in models' MNIST digits); resume reuses them. */
  training: TrainingSetupSchema.optional(),
  /** Which data it trained on (name, checksum, sample counts); createRunDir fills it in from `training`. */
  dataset: DatasetRecordSchema.optional(),
});
/** A run record as the code passes it around; the version is written and checked by the functions here. */
export type RunRecord = Omit<z.infer<typeof RunRecordSchema>, 'version'>;

/**
 * job.json: version 0 is the record before it carried a version (the same fields); version 1's
 * validation split was a seeded random hold-out, which version 2 names.
 */
export const RUN_RECORD_FORMAT: RecordFormat<typeof RunRecordSchema> = {
  what: 'run record (job.json)',
  version: RUN_RECORD_VERSION,
  schema: RunRecordSchema,
  upgrades: {
    0: (older) => older,
    1: (older) => {
      const training = older.training as Record<string, unknown> | undefined;
      return training ? { ...older, training: { ...training, data: withEarlierHoldOut(training.data) } } : older;
    },
  },
};

/** The run record of a run folder; errors name the file and what is wrong with it. */
export function readRunRecord(runDir: string): RunRecord {
  const file = join(runDir, 'job.json');
  let json: unknown;
  try {
    json = JSON.parse(readFileSync(file, 'utf8'));
  } catch (err) {
    throw new Error(`${file} cannot be read as a run record (${(err as Error).message}); it may be damaged.`);
  }
  const { version: _version, ...record } = readRecord(RUN_RECORD_FORMAT, json, file);
  return record;
}
