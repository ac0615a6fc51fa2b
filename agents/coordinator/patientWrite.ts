/**
 * A write that must not be lost — the job's last checkpoint, its weights at the end of training —
 * tried again while the disk (or the user's quota) is full, ENOSPC or EDQUOT: a passing state that
 * other processes' files cause and the user fixes without the job. The state is held in memory
 * meanwhile, so freeing space is enough to keep hours of training. Bounded: after `giveUpMs` the last
 * error is thrown, as it is at once for any other cause (a folder without write permission is a
 * setting, met by the job's first checkpoint already, and said at once).
 */
const FIXABLE = new Set(['ENOSPC', 'EDQUOT']);

export interface Patience {
  /** Between tries. */
  retryMs: number;
  /** From the first failure to giving up. */
  giveUpMs: number;
  /** Called once, at the first fixable failure, with its error and how long the write will be tried. */
  onWait(err: Error, giveUpMs: number): void;
  /** Called when a try after waiting succeeds, with the time waited. */
  onRecovered(waitedMs: number): void;
}

/** The OS error code behind `err` (itself, or its cause). */
export function osCode(err: unknown): string | undefined {
  const own = (err as NodeJS.ErrnoException | undefined)?.code;
  if (own) return own;
  const cause = (err as { cause?: unknown } | undefined)?.cause;
  return cause ? osCode(cause) : undefined;
}

export async function writePatiently<T>(write: () => T, patience: Patience, sleep = (ms: number) => new Promise<void>((resolve) => setTimeout(resolve, ms))): Promise<T> {
  let waitingSince: number | null = null;
  for (;;) {
    try {
      const result = write();
      if (waitingSince !== null) patience.onRecovered(performance.now() - waitingSince);
      return result;
    } catch (err) {
      const code = osCode(err);
      if (!code || !FIXABLE.has(code)) throw err;
      if (waitingSince === null) {
        waitingSince = performance.now();
        patience.onWait(err as Error, patience.giveUpMs);
      } else if (performance.now() - waitingSince >= patience.giveUpMs) throw err;
      await sleep(patience.retryMs);
    }
  }
}
