import { parseArgs } from 'node:util';
import type { CommandIo } from './commandIo.js';
import { attachJob } from '../jobs/attachJob.js';
import { findDeployRecord } from '../jobs/deployRecord.js';
import { launcherFor } from '../jobs/launcherFor.js';
import { jobEventWriter, processIo } from './jobIo.js';
import { detachOnInterrupt } from './detachHint.js';
import { onePositional, reportCommandError } from './usage.js';

/**
 * `shoal attach <job> [--json] [--no-follow]`: the job's whole history, then live events until it ends.
 * Exit 0 when it finished (or, with --no-follow, when the history was read), 1 otherwise.
 */
export async function runAttachCommand(args: string[], io: CommandIo = processIo): Promise<number> {
  try {
    const { values, positionals } = parseArgs({ args, options: { json: { type: 'boolean' }, 'no-follow': { type: 'boolean' }, verbose: { type: 'boolean' } }, allowPositionals: true });
    const target = onePositional(positionals, 'the job to attach to', 'Usage: shoal attach <job> [--json] [--no-follow]   (job ids: shoal jobs)');
    const { record } = findDeployRecord(target);
    const launcher = launcherFor(record);
    const follow = values['no-follow'] !== true;
    const release = follow ? detachOnInterrupt(record.jobId, io) : () => {};
    try {
      const result = await attachJob(launcher, record, jobEventWriter(io, values.json === true, values.verbose === true), { follow });
      io.err(`job ${record.jobId}: ${result.events} events${result.live ? ' (live)' : ' (from the history on the head host)'}${result.ended ? `; ${result.ended}` : '; still running'}\n`);
      return result.ended === 'finished' || (!follow && !result.ended) ? 0 : 1;
    } finally {
      release();
      launcher.close();
    }
  } catch (err) {
    return reportCommandError('attach', err, io);
  }
}
