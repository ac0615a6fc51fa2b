import type { CommandIo } from './commandIo.js';
import { INTERRUPTED_EXIT } from './interrupt.js';

/**
 * While a command follows a deployed job (`shoal deploy`, `shoal attach`): Ctrl-C (or SIGTERM) leaves
 * the job running and says how to come back to it or end it, then exits INTERRUPTED_EXIT. Returns the
 * function that removes the handlers once following is over.
 */
export function detachOnInterrupt(jobId: string, io: CommandIo): () => void {
  const onSignal = (signal: NodeJS.Signals) => {
    io.err(`\nshoal: ${signal}: detached from job ${jobId}; it keeps running. Re-attach with \`shoal attach ${jobId}\`; stop it with \`shoal stop ${jobId}\` (it saves a checkpoint first).\n`);
    process.exit(INTERRUPTED_EXIT);
  };
  process.on('SIGINT', onSignal);
  process.on('SIGTERM', onSignal);
  return () => {
    process.off('SIGINT', onSignal);
    process.off('SIGTERM', onSignal);
  };
}
