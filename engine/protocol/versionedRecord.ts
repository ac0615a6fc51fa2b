import type { z } from 'zod';
import { describeIssues } from './describeIssues.js';

/**
 * A kind of record Shoal writes to disk (job.json, deploy.json, a checkpoint's header, …): its schema
 * at the current version, and how to bring a file of an earlier version up to it. Every record carries
 * a `version`; a file without one is of version 0, the format before records were versioned.
 * test/unit/schemaFingerprints.test.ts fails when a schema changes and its version does not.
 */
export interface RecordFormat<S extends z.ZodType> {
  /** What a user calls it, e.g. "run record (job.json)". */
  what: string;
  version: number;
  schema: S;
  /** Upgrades by the version they start from: `upgrades[k]` turns a record of version k into one of k + 1. */
  upgrades: Record<number, (older: Record<string, unknown>) => Record<string, unknown>>;
}

/** Read a record of `format` from its parsed JSON; `where` names the file. Errors say what, where and what to do. */
export function readRecord<S extends z.ZodType>(format: RecordFormat<S>, json: unknown, where: string): z.output<S> {
  if (typeof json !== 'object' || json === null || Array.isArray(json)) throw new Error(`${where} is not a ${format.what}: it holds no JSON object. It may be damaged.`);
  let record = json as Record<string, unknown>;
  const stated = record.version ?? 0;
  if (typeof stated !== 'number' || !Number.isInteger(stated) || stated < 0) throw new Error(`${where} is not a ${format.what}: its version is ${JSON.stringify(stated)}, not a whole number.`);
  if (stated > format.version) {
    throw new Error(`${where} is a ${format.what} of version ${stated}; this Shoal reads versions up to ${format.version}. It was written by a newer Shoal: update Shoal to read it.`);
  }
  for (let version = stated; version < format.version; version++) {
    const upgrade = format.upgrades[version];
    if (!upgrade) throw new Error(`${where} is a ${format.what} of version ${version}, which this Shoal no longer reads (it reads version ${format.version}).`);
    record = { ...upgrade(record), version: version + 1 };
  }
  const parsed = format.schema.safeParse(record);
  if (!parsed.success) throw new Error(`${where} is not a valid ${format.what}: ${describeIssues(parsed.error.issues)}. It may be damaged or edited by hand.`);
  return parsed.data;
}
