import type { JobEvent, JobState } from '../../protocol/events.js';

/** Someone waiting for particular events of a running job (a resize its generation, a stop its checkpoint). */
export interface EventFollower {
  onEvent(event: JobEvent): void;
  /** The event stream broke off (the coordinator crashed and is restarted): what was awaited will not come. */
  onEnd(reason: string): void;
}

type Of<T extends JobEvent['type']> = Extract<JobEvent, { type: T }>;

/**
 * A job's event bookkeeping: everything it has said, in order (the studio back-fills from it), the
 * state its latest status set, and who hears each new event — the job's owner first, then the
 * followers of the moment.
 */
export class JobEventLog {
  readonly events: JobEvent[] = [];
  state: JobState = 'starting';
  private readonly followers = new Set<EventFollower>();

  /** `onEvent` hears each event with its index in `events`. */
  constructor(private readonly onEvent: (event: JobEvent, index: number) => void) {}

  emit(event: JobEvent): void {
    if (event.type === 'status') this.state = event.state;
    this.events.push(event);
    this.onEvent(event, this.events.length - 1);
    for (const f of this.followers) f.onEvent(event);
  }

  log(level: 'info' | 'warn' | 'error', host: string, rank: number | null, message: string): void {
    this.emit({ type: 'log', level, host, rank, message, time: Date.now() });
  }

  /** Hear every event from now on; the returned function stops it. */
  follow(follower: EventFollower): () => void {
    this.followers.add(follower);
    return () => this.followers.delete(follower);
  }

  /** Tell every follower that the stream broke off. */
  endFollowers(reason: string): void {
    for (const f of this.followers) f.onEnd(reason);
  }

  /** The newest event of a type (the current membership, the last step). */
  latest<T extends JobEvent['type']>(type: T): Of<T> | undefined {
    for (let i = this.events.length - 1; i >= 0; i--) {
      const e = this.events[i];
      if (e.type === type) return e as Of<T>;
    }
    return undefined;
  }

  /** The job is over: finished, failed or stopped. */
  get over(): boolean {
    return this.state === 'finished' || this.state === 'failed' || this.state === 'stopped';
  }
}
