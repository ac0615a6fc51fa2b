import { parseArgs } from 'node:util';
import type { CommandIo } from './commandIo.js';
import { findDeployRecord } from '../jobs/deployRecord.js';
import { launcherFor } from '../jobs/launcherFor.js';
import { processIo } from './jobIo.js';

/** `shoal stop <job>`: kill the job's processes on every host and remove its temporary files. */
export async function runStopCommand(args: string[], io: CommandIo = processIo): Promise<number> {
  try {
    const { positionals } = parseArgs({ args, options: {}, allowPositionals: true });
    if (positionals.length !== 1) throw new Error('Usage: shoal stop <job>   (job ids: shoal jobs)');
    const { record } = findDeployRecord(positionals[0]);
    const launcher = launcherFor(record);
    try {
      const outcomes = await launcher.stop(record.jobId);
      for (const o of outcomes) io.err(o.ok ? `${o.target}: stopped, temporary files removed\n` : `${o.target}: ${o.error}\n`);
      const failed = outcomes.filter((o) => !o.ok);
      if (failed.length) io.out(`job ${record.jobId}: stopped on ${outcomes.length - failed.length} of ${outcomes.length} hosts; run shoal stop ${record.jobId} again once ${failed.map((f) => f.target).join(', ')} can be reached.\n`);
      else io.out(`job ${record.jobId} stopped on ${outcomes.length} host${outcomes.length === 1 ? '' : 's'}; its logs, history and checkpoints stay in ~/.shoal/runs/${record.jobId} on the hosts.\n`);
      return failed.length ? 1 : 0;
    } finally {
      launcher.close();
    }
  } catch (err) {
    io.err(`shoal stop: ${(err as Error).message}\n`);
    return 1;
  }
}
