import type { JobEvent } from '../../protocol/events.js';
import type { PrepareEvent } from '../deploy/launcher.js';
import type { CommandIo } from './commandIo.js';
import { describeEvent } from './eventPrinter.js';

/** Where job commands write: stdout for results (JSON lines with --json), stderr for progress. */
export const processIo: CommandIo = {
  out: (t) => process.stdout.write(t),
  err: (t) => process.stderr.write(t),
  interactive: Boolean(process.stdin.isTTY),
};

const MARK: Record<PrepareEvent['status'], string> = { running: '…', ok: 'ok', skipped: 'skip', fail: 'FAIL', progress: '' };

/** One progress line per host and step: `gpu2  upload  ok  uploaded to …`. */
export function prepareProgress(io: CommandIo, width: number): (e: PrepareEvent) => void {
  return (e) => io.err(`${e.target.padEnd(width)}  ${e.step.padEnd(11)} ${MARK[e.status].padEnd(4)} ${e.detail}\n`);
}

/** Events as JSON lines, or as readable lines; logs always carry their host and rank. */
export function jobEventWriter(io: CommandIo, json: boolean, verbose = false, validationSamples?: number): (e: JobEvent) => void {
  return (e) => {
    if (json) return io.out(JSON.stringify(e) + '\n');
    const line = verbose && e.type === 'log' ? `[${e.host}${e.rank === null ? '' : ` rank ${e.rank}`}] ${e.message}` : describeEvent(e, validationSamples);
    if (line) io.out(line + '\n');
  };
}
