import type { CommandIo } from './commandIo.js';

/**
 * A command line that is wrong as typed — an unknown command or option, an argument too many or too
 * few — as opposed to a value that is refused: the command names what is wrong and exits 2.
 */
export class UsageError extends Error {}

/** 2 for a command line wrong as typed (a UsageError, or what Node's parseArgs refuses), else 1. */
export function exitCodeFor(err: unknown): 1 | 2 {
  if (err instanceof UsageError) return 2;
  return (err as { code?: unknown } | null)?.code?.toString().startsWith('ERR_PARSE_ARGS') ? 2 : 1;
}

/** parseArgs' message, one line ending in a full stop, with where to read the command's usage. */
export function usageMessage(command: string, err: Error): string {
  // Node's advice on positionals that start with a dash is about its own syntax, not the user's mistake.
  const first = err.message.split('\n')[0].split('. To specify a positional')[0].replace(/\.?$/, '.');
  return `${first} See \`shoal ${command} --help\`.`;
}

/** How a command reports the error that ended it: one line on stderr; the exit code (1 or 2) is returned. */
export function reportCommandError(command: string, err: unknown, io: CommandIo): 1 | 2 {
  const parseError = (err as { code?: unknown } | null)?.code?.toString().startsWith('ERR_PARSE_ARGS');
  io.err(`shoal ${command}: ${parseError ? usageMessage(command, err as Error) : (err as Error).message}\n`);
  return exitCodeFor(err);
}

/** The one positional argument a command takes; none, or one too many, is a UsageError ending in `usage`. */
export function onePositional(positionals: string[], what: string, usage: string): string {
  if (positionals.length === 1) return positionals[0];
  const wrong = positionals.length === 0 ? `Give ${what}.` : `Unexpected argument "${positionals[1]}": give ${what} only.`;
  throw new UsageError(`${wrong} ${usage}`);
}
