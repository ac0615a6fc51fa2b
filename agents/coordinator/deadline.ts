/** The longest delay setTimeout keeps (about 24.8 days); a later deadline is re-armed in steps. */
const MAX_DELAY_MS = 2 ** 31 - 1;

/**
 * Call `onDeadline` once at `stopBy` (ms since the epoch; nothing when absent), without keeping the
 * process alive for it. A Slurm job's coordinator is given one before its allocation's time limit, so
 * that it stops with a checkpoint rather than being killed. Returns the function that cancels it.
 */
export function whenDeadline(stopBy: number | undefined, onDeadline: () => void, now: () => number = Date.now): () => void {
  if (stopBy === undefined) return () => {};
  let timer: NodeJS.Timeout | undefined;
  const arm = () => {
    const left = stopBy - now();
    if (left <= 0) return onDeadline();
    timer = setTimeout(arm, Math.min(left, MAX_DELAY_MS));
    timer.unref();
  };
  arm();
  return () => clearTimeout(timer);
}
