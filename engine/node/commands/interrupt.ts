import { join } from 'node:path';
import type { LocalJob } from '../jobs/localJob.js';
import { latestCheckpoint } from '../jobs/runStore.js';

/** How long Ctrl-C waits for the coordinator's checkpoint before stopping the job anyway. */
export const INTERRUPT_WAIT_MS = 30_000;
/** The exit status of `shoal train`/`resume` stopped by Ctrl-C or SIGTERM: 128 + SIGINT, as shells report it. */
export const INTERRUPTED_EXIT = 130;

export interface Interrupts {
  /** Null until the first signal; then resolves, once the job has stopped, with the line that says how. */
  readonly stopping: Promise<string> | null;
}

/**
 * Ctrl-C (SIGINT) or SIGTERM while a local job runs: the coordinator saves a checkpoint at the next
 * step boundary and stops (LocalJob.checkpointAndStop), within INTERRUPT_WAIT_MS; a second signal
 * stops the job at once. The line it resolves with names the checkpoint and the resume command, or
 * says there is nothing to resume from.
 */
export function checkpointOnInterrupt(job: LocalJob, say: (line: string) => void): Interrupts {
  let stopping: Promise<string> | null = null;
  const onSignal = (signal: NodeJS.Signals) => {
    if (stopping) {
      say(`${signal} again: stopping now, without waiting for the checkpoint.`);
      void job.stop();
      return;
    }
    say(`${signal}: saving a checkpoint at the next step boundary, then stopping (at most ${INTERRUPT_WAIT_MS / 1000} s; press Ctrl-C again to stop at once).`);
    stopping = job.checkpointAndStop(INTERRUPT_WAIT_MS).then(({ checkpoint, timedOut }) => {
      const resume = `\`shoal resume ${job.runDir}\``;
      if (checkpoint) return `stopped; checkpoint ${checkpoint} written. ${resume} continues from it.`;
      const why = timedOut ? `no checkpoint came within ${INTERRUPT_WAIT_MS / 1000} s, so the job was stopped without one` : 'stopped without a new checkpoint';
      const newest = latestCheckpoint(join(job.runDir, 'checkpoints'));
      return newest ? `${why}; the newest checkpoint is ${newest}: ${resume} continues from it.` : `${why}, and the run has no checkpoint to resume from.`;
    });
  };
  process.on('SIGINT', onSignal);
  process.on('SIGTERM', onSignal);
  return {
    get stopping() {
      return stopping;
    },
  };
}

/**
 * After a job ended early: when a signal stopped it (and it did not fail), say how it stopped and
 * exit INTERRUPTED_EXIT; otherwise return, and the caller reports the failure.
 */
export async function exitIfInterrupted(job: LocalJob, interrupts: Interrupts): Promise<void> {
  if (!interrupts.stopping || job.state === 'failed') return;
  const line = await interrupts.stopping;
  await job.exited();
  process.stderr.write(`shoal: ${line}\n`);
  process.exit(INTERRUPTED_EXIT);
}
