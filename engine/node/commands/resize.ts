import { parseArgs } from 'node:util';
import type { CommandIo } from '../hosts/clusterCommand.js';
import { findRunningJob, resizeRunningJob } from '../jobs/resizeRunningJob.js';
import { describeEvent } from './eventPrinter.js';
import { processIo } from './jobIo.js';

export const RESIZE_USAGE = 'shoal resize <job|run folder> [--add local[:N]] [--remove <rank>[,<rank>…]] [--json]   add or release agents of a running job';

/** `--add local` (one agent), `--add local:N`; an SSH host is refused for now. */
export function parseAdd(value: string | undefined): number {
  if (value === undefined) return 0;
  const match = /^local(?::(\d+))?$/.exec(value);
  if (match) {
    const n = match[1] === undefined ? 1 : Number(match[1]);
    if (!Number.isInteger(n) || n < 1 || n > 64) throw new Error(`--add ${value}: the number of agents must be 1 to 64.`);
    return n;
  }
  if (/^[\w.@:-]+$/.test(value)) {
    throw new Error(
      `--add ${value}: adding an SSH host to a running job is not supported yet. A \`shoal train\` job's coordinator listens on 127.0.0.1 only; add agents on this machine with --add local[:N].`,
    );
  }
  throw new Error(`--add ${JSON.stringify(value)}: expected local or local:N.`);
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
    const { values, positionals } = parseArgs({ args, options: { add: { type: 'string' }, remove: { type: 'string' }, json: { type: 'boolean' } }, allowPositionals: true });
    if (positionals.length !== 1) throw new Error(`Usage: ${RESIZE_USAGE}`);
    const add = parseAdd(values.add);
    const remove = parseRemove(values.remove);
    if (add === 0 && remove.length === 0) throw new Error(`Nothing to do. Usage: ${RESIZE_USAGE}`);
    const job = findRunningJob(positionals[0]);
    const { membership } = await resizeRunningJob(job, add, remove, (line) => io.err(line + '\n'));
    io.out(values.json ? JSON.stringify(membership) + '\n' : `${describeEvent(membership)}\n`);
    return 0;
  } catch (err) {
    io.err(`shoal resize: ${(err as Error).message}\n`);
    return 1;
  }
}
