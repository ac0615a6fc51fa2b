import { existsSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { z } from 'zod';
import { RUN_META_LIMITS, RunMetaUpdateSchema, type RunMetaUpdate } from '../../protocol/runs.js';
import { describeIssues } from '../../protocol/describeIssues.js';
import { readRecord, type RecordFormat } from '../../protocol/versionedRecord.js';
import { writeFileAtomic } from '../hosts/atomicWrite.js';

/**
 * What the user wrote about a run — a name, tags, notes — in `run.meta.json` beside job.json. It is the
 * user's file, not the job's: the job never writes it, and it is replaced atomically, so an edit during
 * a run or a crash mid-write leaves the old or the new version, never half of one.
 */
export const RUN_META_FILE = 'run.meta.json';

/** The version of run.meta.json this Shoal writes; change it, with an upgrade, when the schema changes. */
export const RUN_META_VERSION = 1;
const StoredMetaSchema = z.object({
  version: z.literal(RUN_META_VERSION),
  name: z.string().max(RUN_META_LIMITS.name).optional(),
  tags: z.array(z.string().max(RUN_META_LIMITS.tag)).max(RUN_META_LIMITS.tags).default([]),
  notes: z.string().max(RUN_META_LIMITS.notes).optional(),
});
export type RunMeta = { name?: string; tags: string[]; notes?: string };
/** run.meta.json carried version 1 from the start: there is nothing older to upgrade. */
export const RUN_META_FORMAT: RecordFormat<typeof StoredMetaSchema> = { what: 'run description (run.meta.json)', version: RUN_META_VERSION, schema: StoredMetaSchema, upgrades: {} };

/** The run's meta, or an empty one; a hand-edited file that does not parse reads as empty rather than hiding the run. */
export function readRunMeta(dir: string): RunMeta {
  const file = join(dir, RUN_META_FILE);
  if (!existsSync(file)) return { tags: [] };
  try {
    const { version: _version, ...meta } = readRecord(RUN_META_FORMAT, JSON.parse(readFileSync(file, 'utf8')), file);
    return meta;
  } catch {
    return { tags: [] };
  }
}

/** Apply an edit (checked with RunMetaUpdateSchema; errors name the field) and write the file; returns the new meta. */
export function updateRunMeta(dir: string, update: unknown): RunMeta {
  const parsed = RunMetaUpdateSchema.safeParse(update);
  if (!parsed.success) throw new Error(`The run's details are not valid: ${describeIssues(parsed.error.issues)}.`);
  const edit: RunMetaUpdate = parsed.data;
  const meta = readRunMeta(dir);
  const next: RunMeta = { tags: edit.tags ? [...new Set(edit.tags)] : meta.tags };
  const name = edit.name ?? meta.name;
  const notes = edit.notes ?? meta.notes;
  // An empty name or notes clears it: the run shows its id again.
  if (name) next.name = name;
  if (notes?.trim()) next.notes = notes;
  writeFileAtomic(join(dir, RUN_META_FILE), JSON.stringify({ version: RUN_META_VERSION, ...next }, null, 2) + '\n');
  return next;
}
