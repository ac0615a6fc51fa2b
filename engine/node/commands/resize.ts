import { parseArgs } from 'node:util';
import type { CommandIo } from './commandIo.js';
import { existsSync } from 'node:fs';
import { join, resolve } from 'node:path';
import { connectPrompts } from './connectPrompts.js';
import { DEPLOY_RECORD, listDeployRecords, readDeployRecord, type DeployRecord } from '../jobs/deployRecord.js';
import { resizeDeployedJob, type HostAgents } from '../jobs/resizeDeployedJob.js';
import { findRunningJob, resizeRunningJob } from '../jobs/resizeRunningJob.js';
import { describeEvent } from './eventPrinter.js';
import { prepareProgress, processIo } from './jobIo.js';
import { onePositional, reportCommandError } from './usage.js';

export const RESIZE_USAGE = 'shoal resize <job|run folder> [--add local[:N] | <host>[:N],…] [--remove <rank>[,<rank>…]] [--trust-new] [--json]   add or release agents of a running job';

/**
 * `--add local`, `--add local:N`, `--add gpu3`, `--add gpu3:2,gpu4`: agents to start, per host. `local`
 * is this machine; other names are hosts of the job's cluster (or another stored cluster).
 */
export function parseAdd(value: string | undefined): HostAgents[] {
  if (value === undefined) return [];
  return value.split(',').map((part) => {
    const match = /^([A-Za-z0-9][\w.@-]*)(?::(\d+))?$/.exec(part.trim());
    if (!match) throw new Error(`--add ${JSON.stringify(value)}: expected local[:N] or a host alias[:N], comma-separated (e.g. --add gpu3:2,gpu4).`);
    const count = match[2] === undefined ? 1 : Number(match[2]);
    if (!Number.isInteger(count) || count < 1 || count > 64) throw new Error(`--add ${part}: the number of agents must be 1 to 64.`);
    return { host: match[1], count };
  });
}

export function parseRemove(value: string | undefined): number[] {
  if (value === undefined) return [];
  const parts = value.split(',').map((p) => p.trim());
  if (parts.some((p) => !/^\d+$/.test(p))) throw new Error(`--remove ${value}: expected ranks as non-negative whole numbers, comma-separated (e.g. --remove 2,3).`);
  return [...new Set(parts.map(Number))];
}

/**
 * `shoal resize <job> --add local[:N] | --remove <ranks>`: change a running job's agents without a
 * restart. Waits for the generation that applies the request and prints it (a JSON line with --json).
 */
export async function runResizeCommand(args: string[], io: CommandIo = processIo): Promise<number> {
  try {
    const { values, positionals } = parseArgs({ args, options: { add: { type: 'string' }, remove: { type: 'string' }, json: { type: 'boolean' }, 'trust-new': { type: 'boolean' } }, allowPositionals: true });
    const target = onePositional(positionals, 'the job or run folder to resize', `Usage: ${RESIZE_USAGE}`);
    const add = parseAdd(values.add);
    const remove = parseRemove(values.remove);
    if (add.length === 0 && remove.length === 0) throw new Error(`Nothing to do. Usage: ${RESIZE_USAGE}`);
    const deployed = deployedJob(target);
    if (deployed) {
      const { membership } = await resizeDeployedJob(deployed.record, deployed.runDir, { add, remove }, { ...connectPrompts(io, values['trust-new'] === true), onProgress: (line) => io.err(line + '\n'), onPrepare: prepareProgress(io, Math.max(...add.map((h) => h.host.length))) });
      io.out(values.json ? JSON.stringify(membership) + '\n' : `${describeEvent(membership)}\n`);
      return 0;
    }
    const job = findRunningJob(target);
    const remoteHost = add.find((a) => a.host !== 'local');
    if (remoteHost) {
      throw new Error(`--add ${remoteHost.host}: job ${job.record.jobId} was started with \`shoal train\` (or the studio) on this machine, and its coordinator listens on 127.0.0.1 only; add agents here with --add local[:N], or deploy with \`shoal deploy\` to grow a job onto SSH hosts.`);
    }
    const { membership } = await resizeRunningJob(job, add.reduce((n, a) => n + a.count, 0), remove, (line) => io.err(line + '\n'));
    io.out(values.json ? JSON.stringify(membership) + '\n' : `${describeEvent(membership)}\n`);
    return 0;
  } catch (err) {
    return reportCommandError('resize', err, io);
  }
}

/** A job started with `shoal deploy` (its run folder has deploy.json), by id or run folder; else undefined. */
function deployedJob(target: string): { record: DeployRecord; runDir: string } | undefined {
  const byId = listDeployRecords().find((r) => r.record.jobId === target);
  if (byId) return byId;
  const file = join(resolve(target), DEPLOY_RECORD);
  if (!existsSync(file)) return undefined;
  return { record: readDeployRecord(file), runDir: resolve(target) };
}
