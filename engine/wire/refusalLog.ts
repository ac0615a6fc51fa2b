/**
 * Refused connections, logged with the peer's address, but not one line per refusal without end: a
 * flood would otherwise fill the log (and the coordinator's event history, which studios replay). The
 * first `perWindow` refusals of a window are passed on as they come; the rest are counted by address
 * and summarised in one line when the window ends.
 */
export type RefusalSink = (peer: string, reason: string) => void;

export class RefusalLog {
  private logged = 0;
  private windowStart = 0;
  private readonly unlogged = new Map<string, number>();
  private lastReason = '';
  private timer: ReturnType<typeof setTimeout> | null = null;

  constructor(
    private readonly sink: RefusalSink,
    private readonly perWindow = 20,
    private readonly windowMs = 10_000,
  ) {}

  /** `peer` is host:port; summaries group by host. */
  note(peer: string, reason: string): void {
    const now = Date.now();
    if (now - this.windowStart >= this.windowMs && !this.timer) {
      this.windowStart = now;
      this.logged = 0;
    }
    if (this.logged < this.perWindow) {
      this.logged++;
      this.sink(peer, reason);
      return;
    }
    const host = peer.replace(/:\d+$/, '');
    this.unlogged.set(host, (this.unlogged.get(host) ?? 0) + 1);
    this.lastReason = reason;
    this.timer ??= setTimeout(() => this.summarise(), this.windowStart + this.windowMs - now);
    this.timer.unref?.();
  }

  private summarise(): void {
    this.timer = null;
    const counts = [...this.unlogged].sort((a, b) => b[1] - a[1]);
    this.unlogged.clear();
    const total = counts.reduce((sum, [, n]) => sum + n, 0);
    const shown = counts.slice(0, 5).map(([host, n]) => `${host} ×${n}`);
    if (counts.length > 5) shown.push(`${counts.length - 5} more addresses`);
    this.sink(shown.join(', '), `${total} more connections refused in the last ${this.windowMs / 1000} s, not logged one by one (the last: ${this.lastReason})`);
    // A new window starts now: the next refusals are logged as they come again.
    this.windowStart = Date.now();
    this.logged = 0;
  }
}
