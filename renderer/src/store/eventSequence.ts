import type { IndexedJobEvent, JobEvent } from '../../../engine/protocol/events';

/**
 * A job's events in the order of their index in the job's history, each applied once, however they
 * arrive: the history fetched on re-attach and the live stream overlap, and a live event can come
 * before the history that precedes it. Each event costs a constant amount of work, whatever the length
 * of the history; two events with equal content but different indices are two events.
 */
export class EventSequence {
  /** The index of the next event to apply: every event before it has been. */
  next = 0;
  /** Events past a gap, waiting for the ones before them. */
  private readonly early = new Map<number, JobEvent>();

  /** Take events (history or live, in any order, repeats included); returns those that are now next, in order. */
  accept(events: Iterable<IndexedJobEvent>): JobEvent[] {
    const ready: JobEvent[] = [];
    for (const { index, event } of events) {
      if (index < this.next || this.early.has(index)) continue;
      if (index > this.next) {
        this.early.set(index, event);
        continue;
      }
      ready.push(event);
      this.next++;
      for (let waiting = this.early.get(this.next); waiting !== undefined; waiting = this.early.get(this.next)) {
        this.early.delete(this.next);
        ready.push(waiting);
        this.next++;
      }
    }
    return ready;
  }

  /** Whether later events wait for earlier ones that have not come: fetch the history from `next`. */
  get hasGap(): boolean {
    return this.early.size > 0;
  }
}
