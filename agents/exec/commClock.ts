/**
 * Wall time during which at least one of a step's collectives was in flight. Buckets overlap one
 * another and the backward pass, so summing each collective's duration would count the same
 * milliseconds several times; the union of their intervals is what the step actually spent
 * communicating, hidden or not.
 */
export class CommClock {
  private active = 0;
  private since = 0;
  private total = 0;

  /** Start a collective now and time it until it settles. */
  track<T>(start: () => Promise<T>): Promise<T> {
    if (this.active++ === 0) this.since = performance.now();
    return start().finally(() => {
      if (--this.active === 0) this.total += performance.now() - this.since;
    });
  }

  /** Milliseconds counted since the last take (call when nothing is in flight). */
  take(): number {
    const ms = this.total;
    this.total = 0;
    return ms;
  }
}
