import { parseArgs } from 'node:util';
import { pullRun, type PullEvent } from '../deploy/pullRun.js';
import type { CommandIo } from './commandIo.js';
import { connectPrompts } from './connectPrompts.js';
import { findDeployRecord } from '../jobs/deployRecord.js';
import { processIo } from './jobIo.js';
import { onePositional, reportCommandError } from './usage.js';

export const PULL_USAGE = 'shoal pull <job> [--host H[,H…]] [--trust-new] [--json]             copy a deployed run\'s folder (checkpoints, profile, events, logs) here';

const MARK: Record<PullEvent['status'], string> = { running: '…', progress: '', ok: 'ok', skipped: 'skip', fail: 'FAIL' };

/**
 * `shoal pull <job>`: copy the job's run folder from every host into its local run folder (the head's
 * files at the top, each other host's under hosts/<alias>/), with per-host progress on stderr. Safe to
 * run again at any time, during or after the job: only what changed is copied, a cut copy continues.
 * Exit 0 when every host's files are here, 1 when a host could not be copied from (it is named).
 */
export async function runPullCommand(args: string[], io: CommandIo = processIo): Promise<number> {
  try {
    const { values, positionals } = parseArgs({ args, options: { host: { type: 'string' }, json: { type: 'boolean' }, 'trust-new': { type: 'boolean' } }, allowPositionals: true });
    const target = onePositional(positionals, 'the job to pull', `Usage: ${PULL_USAGE}   (job ids: shoal jobs)`);
    const { record, runDir } = findDeployRecord(target);
    const known = record.launcher === 'local' ? ['localhost'] : record.launcher === 'slurm' ? [record.head] : record.hosts.map((h) => h.alias);
    const hosts = values.host?.split(',').map((h) => h.trim());
    const unknown = hosts?.filter((h) => !known.includes(h)) ?? [];
    if (unknown.length) throw new Error(`--host ${unknown.join(', ')}: not a host of job ${record.jobId} (its hosts: ${known.join(', ')}).`);
    const width = Math.max(...known.map((h) => h.length));
    const results = await pullRun(record, runDir, {
      ...connectPrompts(io, values['trust-new'] === true),
      ...(hosts ? { hosts } : {}),
      onProgress: (e) => io.err(`${e.host.padEnd(width)}  ${MARK[e.status].padEnd(4)} ${e.detail}\n`),
    });
    const failed = results.filter((r) => !r.ok);
    const copied = results.reduce((n, r) => n + r.copied, 0);
    const bytes = results.reduce((n, r) => n + r.bytes, 0);
    if (values.json) io.out(JSON.stringify({ jobId: record.jobId, runDir, hosts: results }) + '\n');
    else if (failed.length) io.out(`job ${record.jobId}: copied from ${results.length - failed.length} of ${results.length} hosts into ${runDir}; not from ${failed.map((f) => f.host).join(', ')} (above). Run shoal pull ${record.jobId} again once they can be reached: it copies only what is missing.\n`);
    else io.out(`job ${record.jobId}: ${copied} file${copied === 1 ? '' : 's'} copied (${(bytes / 1024 ** 2).toFixed(1)} MiB), ${results.reduce((n, r) => n + r.unchanged, 0)} already here, from ${results.length} host${results.length === 1 ? '' : 's'} into ${runDir}\n`);
    return failed.length ? 1 : 0;
  } catch (err) {
    return reportCommandError('pull', err, io);
  }
}
