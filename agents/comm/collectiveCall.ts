import { ReceiveTimeout } from '../../engine/wire/connection.js';
import type { ProcessGroup } from './processGroup.js';

/**
 * One running collective on one member: sends and receives tagged with the collective's tag, every
 * receive bounded by the group's timeout, and every failure reported as where this member is stuck —
 * "rank 2: all-reduce s17/allreduce timed out after 120 s waiting for rank 3 (127.0.0.1:40211) at rs1/j0".
 * If any member's connection closes, every pending receive fails at once, naming that member.
 */
export class CollectiveCall {
  private readonly pending = new Set<(e: Error) => void>();
  private readonly unsubscribe: Array<() => void> = [];
  private readonly flushes: Promise<void>[] = [];
  private failure: Error | null = null;

  constructor(readonly group: ProcessGroup, readonly collective: string, readonly tag: string) {
    for (const r of group.others()) {
      this.unsubscribe.push(
        group.link(r).whenClosed((err) => this.fail(this.error(`failed: ${group.describe(r)} closed its connection (${err.message})`))),
      );
    }
  }

  /** Queue a payload for `rank`; the returned promise resolves once the bytes are in the kernel. */
  send(rank: number, step: string, payload?: Uint8Array): Promise<void> {
    if (this.failure) throw this.failure;
    const conn = this.group.link(rank);
    if (conn.closed) throw this.error(`failed at ${step}: ${this.group.describe(rank)} is disconnected`);
    const flushed = conn.sendFlushed({ type: 'coll', tag: `${this.tag}/${step}` }, payload);
    this.flushes.push(flushed);
    return flushed;
  }

  /** Wait until the socket to `rank` has room (backpressure), so senders never queue unbounded memory. */
  whenWritable(rank: number): Promise<void> {
    return this.group.link(rank).whenWritable();
  }

  /** Receive the payload of `step` from `rank`, landing in `sink` when possible (see Connection.receive). */
  async receive(rank: number, step: string, sink?: Uint8Array): Promise<Uint8Array | undefined> {
    if (this.failure) throw this.failure;
    const timeoutMs = this.group.timeoutMs;
    let rejectEarly!: (e: Error) => void;
    const failed = new Promise<never>((_, reject) => (rejectEarly = reject));
    this.pending.add(rejectEarly);
    try {
      const message = await Promise.race([this.group.link(rank).receive(`${this.tag}/${step}`, { timeoutMs, sink }), failed]);
      return message.payload;
    } catch (err) {
      if (err instanceof ReceiveTimeout) {
        throw this.error(`timed out after ${timeoutMs / 1000} s waiting for ${this.group.describe(rank)} at ${step}`);
      }
      if (err === this.failure) throw err;
      throw this.error(`failed at ${step} waiting for ${this.group.describe(rank)}: ${(err as Error).message}`);
    } finally {
      this.pending.delete(rejectEarly);
    }
  }

  /** Wait for every send of this call to leave this process, so the caller may reuse its arrays. */
  async finish(): Promise<void> {
    try {
      await Promise.all(this.flushes);
    } finally {
      this.unsubscribe.forEach((u) => u());
    }
  }

  /** After a failure: fail this call's other pending receives at once (no stray timers), release subscriptions. */
  abandon(error: Error): void {
    this.fail(error);
    this.unsubscribe.forEach((u) => u());
  }

  error(what: string): Error {
    return new Error(`rank ${this.group.rank}: ${this.collective} ${this.tag} ${what}`);
  }

  private fail(error: Error): void {
    if (this.failure) return;
    this.failure = error;
    for (const reject of this.pending) reject(error);
  }
}

/** Run a collective's body with a call, always releasing the call's subscriptions. */
export async function runCollective<T>(group: ProcessGroup, collective: string, tag: string, body: (call: CollectiveCall) => Promise<T>): Promise<T> {
  const call = new CollectiveCall(group, collective, tag);
  try {
    const out = await body(call);
    await call.finish();
    return out;
  } catch (err) {
    call.abandon(err as Error);
    throw err;
  }
}
