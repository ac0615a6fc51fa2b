import { parseArgs } from 'node:util';
import type { CommandIo } from './commandIo.js';
import { findDeployRecord } from '../jobs/deployRecord.js';
import { launcherFor } from '../jobs/launcherFor.js';
import { stopDeployedJob } from '../jobs/stopDeployedJob.js';
import { processIo } from './jobIo.js';
import { onePositional, reportCommandError } from './usage.js';

export const STOP_USAGE = 'shoal stop <job> [--now]                                          save a checkpoint, then end the job on every host (--now: at once)';

/**
 * `shoal stop <job> [--now]`: the coordinator saves a checkpoint and ends the job (--now: no checkpoint),
 * then whatever is left is killed on every host and the temporary files go. A job that has already
 * ended is left as it is (its state stays what `shoal jobs` says).
 */
export async function runStopCommand(args: string[], io: CommandIo = processIo): Promise<number> {
  try {
    const { positionals, values } = parseArgs({ args, options: { now: { type: 'boolean' } }, allowPositionals: true });
    const target = onePositional(positionals, 'the job to stop', `Usage: ${STOP_USAGE}   (job ids: shoal jobs)`);
    const { record } = findDeployRecord(target);
    const launcher = launcherFor(record);
    try {
      const id = record.jobId;
      const result = await stopDeployedJob(launcher, record, { now: values.now === true, say: (line) => io.err(`${line}\n`) });
      if (result.alreadyEnded) {
        io.out(`job ${id} already ${result.alreadyEnded}; nothing to stop. Its history: shoal attach ${id}; its files: shoal pull ${id}\n`);
        return 0;
      }
      for (const o of result.outcomes) io.err(o.ok ? `${o.target}: stopped, temporary files removed\n` : `${o.target}: ${o.error}\n`);
      if (result.note) io.err(`${result.note}\n`);
      if (result.checkpoint) io.err(`checkpoint ${result.checkpoint} written on ${record.head}: shoal pull ${id} copies it here; shoal resume ${id} continues from it.\n`);
      const failed = result.outcomes.filter((o) => !o.ok);
      if (failed.length) io.out(`job ${id}: stopped on ${result.outcomes.length - failed.length} of ${result.outcomes.length} hosts; run shoal stop ${id} again once ${failed.map((f) => f.target).join(', ')} can be reached.\n`);
      else io.out(`job ${id} stopped on ${result.outcomes.length} host${result.outcomes.length === 1 ? '' : 's'}; its logs, history and checkpoints stay in ~/.shoal/runs/${id} on the hosts (shoal pull ${id} copies them here).\n`);
      return failed.length ? 1 : 0;
    } finally {
      launcher.close();
    }
  } catch (err) {
    return reportCommandError('stop', err, io);
  }
}
