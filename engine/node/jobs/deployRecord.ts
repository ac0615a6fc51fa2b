import { existsSync, readdirSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { z } from 'zod';
import { SshHostSchema } from '../hosts/host.js';
import { writeFileAtomic } from '../hosts/atomicWrite.js';
import type { StartedProcess } from '../deploy/launcher.js';
import type { SlurmJobRecord } from '../deploy/slurm/slurmJobRecord.js';
import { ClusterSettingsSchema } from '../../protocol/clusterSettings.js';
import { SlurmSettingsSchema } from '../../protocol/slurmSettings.js';
import { readRecord, type RecordFormat } from '../../protocol/versionedRecord.js';
import { runsRoot } from './runStore.js';

/** The version of deploy.json this Shoal writes; change it, with an upgrade, when DeployRecordSchema changes. */
export const DEPLOY_RECORD_VERSION = 2;

const StartedProcessSchema = z.object({ target: z.string(), name: z.string(), role: z.enum(['coordinator', 'agent']), pid: z.number(), port: z.number().optional() }) satisfies z.ZodType<StartedProcess>;
const SlurmJobRecordSchema = z.object({
  settings: SlurmSettingsSchema,
  allocation: z.string(),
  nodes: z.array(z.object({ alias: z.string(), peerAddress: z.string() })),
  endTime: z.string().optional(),
  login: SshHostSchema.optional(),
}) satisfies z.ZodType<SlurmJobRecord>;

/**
 * What this machine remembers of a deployed job, in its run folder as deploy.json (beside job.json):
 * enough to find its processes again after the studio or the CLI restarts. Never the secret — that
 * stays on the head host in a mode-600 file for as long as the coordinator runs.
 */
export const DeployRecordSchema = z.object({
  version: z.literal(DEPLOY_RECORD_VERSION),
  jobId: z.string(),
  createdAt: z.string(),
  launcher: z.enum(['local', 'ssh', 'slurm']),
  /** The cluster as the user named it (a stored name or a file). */
  cluster: z.string(),
  /** The hosts the job runs on, head first, as they were when deployed (empty for local). */
  hosts: z.array(SshHostSchema),
  /** The cluster's remote directory, setup commands and env when it set any (absent: ~/.shoal, none). */
  settings: ClusterSettingsSchema.optional(),
  /** A Slurm job's allocation and nodes (its hosts are the nodes; `hosts` is empty). */
  slurm: SlurmJobRecordSchema.optional(),
  head: z.string(),
  model: z.string(),
  steps: z.number(),
  /** Where the coordinator listens, as the head host sees it. */
  coordinator: z.object({ listenHost: z.string(), port: z.number(), pid: z.number() }),
  processes: z.array(StartedProcessSchema),
});
export type DeployRecord = z.infer<typeof DeployRecordSchema>;

/** deploy.json carried its version from the start; version 2 adds a Slurm job's login host (absent before: this machine). */
export const DEPLOY_RECORD_FORMAT: RecordFormat<typeof DeployRecordSchema> = { what: 'deploy record (deploy.json)', version: DEPLOY_RECORD_VERSION, schema: DeployRecordSchema, upgrades: { 1: (older) => older } };

/** The deploy record in a file; errors name the file and what is wrong with it. */
export function readDeployRecord(file: string): DeployRecord {
  return readRecord(DEPLOY_RECORD_FORMAT, JSON.parse(readFileSync(file, 'utf8')), file);
}

export const DEPLOY_RECORD = 'deploy.json';

export function writeDeployRecord(runDir: string, record: DeployRecord): void {
  writeFileAtomic(join(runDir, DEPLOY_RECORD), JSON.stringify(record, null, 2) + '\n');
}

/** Every deployed job this machine knows, newest first. */
export function listDeployRecords(): Array<{ record: DeployRecord; runDir: string }> {
  const root = runsRoot();
  if (!existsSync(root)) return [];
  const found: Array<{ record: DeployRecord; runDir: string }> = [];
  for (const name of readdirSync(root)) {
    const file = join(root, name, DEPLOY_RECORD);
    if (!existsSync(file)) continue;
    try {
      found.push({ record: readDeployRecord(file), runDir: join(root, name) });
    } catch {
      // A half-written or hand-edited record must not hide the others; it is named when asked for.
    }
  }
  return found.sort((a, b) => b.record.createdAt.localeCompare(a.record.createdAt));
}

/** The job with this id, or the one job whose id starts with it. Errors list what there is. */
export function findDeployRecord(id: string): { record: DeployRecord; runDir: string } {
  const all = listDeployRecords();
  const exact = all.find((r) => r.record.jobId === id);
  if (exact) return exact;
  const matches = all.filter((r) => r.record.jobId.startsWith(id));
  if (matches.length === 1) return matches[0];
  if (matches.length > 1) throw new Error(`"${id}" matches ${matches.length} jobs (${matches.map((m) => m.record.jobId).join(', ')}); give more of the id.`);
  const file = join(runsRoot(), id, DEPLOY_RECORD);
  if (existsSync(file)) throw new Error(`${file} cannot be read as a job record; it may be damaged.`);
  throw new Error(`No deployed job "${id}" in ${runsRoot()}. ${all.length ? `Jobs: ${all.slice(0, 5).map((r) => r.record.jobId).join(', ')}${all.length > 5 ? ' …' : ''}.` : 'Deploy one with shoal deploy.'} See them with: shoal jobs`);
}
