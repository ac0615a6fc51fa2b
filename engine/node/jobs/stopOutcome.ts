import type { JobEventLog } from './jobEventLog.js';

export interface StopOutcome {
  /** The checkpoint the stop wrote (null: none, or the job failed instead). */
  checkpoint: string | null;
  /** The job did not end within the wait. */
  timedOut: boolean;
}

/**
 * Wait for the end a checkpoint-and-stop request leads to: the checkpoint saved before the job ended
 * (`stopped`, or `final` if it finished first), null if it failed instead, or a time-out after
 * `waitMs`. Call it before asking, so that no event is missed; `cancel` stops waiting (the request
 * could not be sent).
 */
export function awaitStopOutcome(log: JobEventLog, waitMs: number): { outcome: Promise<StopOutcome>; cancel: () => void } {
  let saved: string | null = null;
  let timer: NodeJS.Timeout | undefined;
  let unfollow = (): unknown => undefined;
  const outcome = new Promise<StopOutcome>((resolve) => {
    timer = setTimeout(() => resolve({ checkpoint: null, timedOut: true }), waitMs);
    unfollow = log.follow({
      onEvent: (e) => {
        if (e.type === 'checkpoint' && e.action === 'saved') saved = e.path;
        const end = e.type === 'final' || (e.type === 'status' && (e.state === 'stopped' || e.state === 'failed'));
        if (!end) return;
        clearTimeout(timer);
        resolve({ checkpoint: e.type === 'status' && e.state === 'failed' ? null : saved, timedOut: false });
      },
      onEnd: () => {},
    });
  });
  const cancel = () => {
    clearTimeout(timer);
    unfollow();
  };
  return { outcome: outcome.finally(cancel), cancel };
}
