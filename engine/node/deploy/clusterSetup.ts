import { randomBytes } from 'node:crypto';
import { exportLines } from './jobScripts.js';
import { shQuote } from './shellQuote.js';
import type { RemoteResult } from './ssh/exec.js';

/**
 * A cluster's setup commands (ClusterSettings.setup), run on a host at every deploy before anything is
 * uploaded, as Ray runs its setup_commands: each in its own shell started in $HOME, with the cluster's
 * env exported and no stdin (the script itself arrives on stdin), in order, stopping at the first that
 * fails. Commands should be idempotent: they run again at the next deploy. They and their output are
 * shown as progress and in errors, so they must not carry secrets (README: Clusters).
 */

/** Runs a script with `sh -s` on the host, calling onLine for each line of output as it arrives. */
export type LineRunner = (script: string, onLine: (line: string) => void) => Promise<RemoteResult>;

export interface SetupProgress {
  /** 1-based. */
  index: number;
  command: string;
  line?: string;
}

/** What a failed setup says: which command, its exit code, its last lines and what to do. */
export class SetupError extends Error {
  constructor(
    readonly index: number,
    readonly total: number,
    readonly command: string,
    readonly code: number | null,
    readonly lastLines: string[],
  ) {
    super(
      `setup command ${index} of ${total} (${preview(command)}) ${code === null ? 'was cut off (no exit status)' : `exited with code ${code}`}` +
        `${lastLines.length ? `; its last lines:\n    ${lastLines.join('\n    ')}` : ' without output'}` +
        `\n  Fix the command (shoal cluster show lists them; shoal cluster add <name> --setup … replaces them) or the host, then deploy again.`,
    );
  }
}

/** A command as progress and errors show it: one line, at most 120 characters. */
export function preview(command: string): string {
  const one = command.replace(/\s*\n\s*/g, '; ');
  return `\`${one.length > 120 ? `${one.slice(0, 117)}…` : one}\``;
}

/** The script: a marker line before each command and after a failure, so output is told apart per command. */
export function setupScript(commands: readonly string[], env: Record<string, string>, tag: string): string {
  return [
    'cd "$HOME" || exit 1',
    ...exportLines(env),
    ...commands.flatMap((c, i) => [
      `echo "${tag} start ${i + 1}"`,
      // A subshell: a syntax error or `exit` ends this command only, and `cd` does not leak into the next.
      `( eval ${shQuote(c)} ) < /dev/null 2>&1 || { c=$?; echo "${tag} failed ${i + 1} $c"; exit 1; }`,
    ]),
    `echo "${tag} done"`,
    '',
  ].join('\n');
}

const KEEP_LINES = 12;

/** Run the commands on one host; throws SetupError naming the one that failed. */
export async function runSetup(run: LineRunner, commands: readonly string[], env: Record<string, string>, onProgress: (p: SetupProgress) => void): Promise<void> {
  if (commands.length === 0) return;
  const tag = `SHOAL_SETUP_${randomBytes(6).toString('hex')}`;
  let index = 0;
  let last: string[] = [];
  let failed: { index: number; code: number } | undefined;
  let done = false;
  const result = await run(setupScript(commands, env, tag), (line) => {
    if (line.startsWith(`${tag} `)) {
      const [, what, i, code] = line.split(' ');
      if (what === 'start') {
        index = Number(i);
        last = [];
        onProgress({ index, command: commands[index - 1] });
      } else if (what === 'failed') failed = { index: Number(i), code: Number(code) };
      else if (what === 'done') done = true;
      return;
    }
    last.push(line.slice(0, 300));
    if (last.length > KEEP_LINES) last.shift();
    if (index > 0) onProgress({ index, command: commands[index - 1], line: line.slice(0, 200) });
  });
  if (done && result.code === 0) return;
  if (failed) throw new SetupError(failed.index, commands.length, commands[failed.index - 1], failed.code, last);
  // Cut off (a lost connection, a timeout) or the shell itself failed before the first command.
  const at = Math.max(index, 1);
  throw new SetupError(at, commands.length, commands[at - 1], result.code, last.length ? last : result.stderr.trim().split('\n').filter(Boolean).slice(-KEEP_LINES));
}
