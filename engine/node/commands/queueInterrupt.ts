import type { CommandIo } from './commandIo.js';

/**
 * While `shoal deploy` waits for a Slurm allocation: Ctrl-C (or SIGTERM) aborts the signal, and the
 * launcher cancels the queued request (scancel) before the command ends, so nothing is left in the
 * queue. Returns the signal and the function that removes the handlers once the job has started.
 */
export function cancelQueueOnInterrupt(io: CommandIo): { signal: AbortSignal; release(): void } {
  const controller = new AbortController();
  const onSignal = (signal: NodeJS.Signals) => {
    io.err(`\nshoal: ${signal}: cancelling the Slurm allocation request…\n`);
    controller.abort();
  };
  process.on('SIGINT', onSignal);
  process.on('SIGTERM', onSignal);
  return {
    signal: controller.signal,
    release: () => {
      process.off('SIGINT', onSignal);
      process.off('SIGTERM', onSignal);
    },
  };
}
