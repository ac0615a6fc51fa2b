import type { Connection } from '../../engine/wire/connection.js';

/** How long a collective waits for any one message before it gives up and says where it is stuck. */
export const DEFAULT_COLLECTIVE_TIMEOUT_MS = 120_000;

export interface ProcessGroupOptions {
  /** Per-receive timeout inside collectives (default 120 s). */
  timeoutMs?: number;
  /** Name used in errors, e.g. "data-parallel group of stage 1". */
  name?: string;
}

/**
 * The ranks that take part in a collective, in ring order, and this agent's connections to them.
 * Every member must build its group with the same `members` order: the order fixes who sums which
 * chunk, and so makes the result identical on every member.
 */
export class ProcessGroup {
  readonly size: number;
  /** This agent's position in `members`. */
  readonly index: number;
  readonly timeoutMs: number;
  readonly name: string;

  constructor(
    readonly rank: number,
    readonly members: readonly number[],
    private readonly links: ReadonlyMap<number, Connection>,
    options: ProcessGroupOptions = {},
  ) {
    this.size = members.length;
    this.index = members.indexOf(rank);
    this.timeoutMs = options.timeoutMs ?? DEFAULT_COLLECTIVE_TIMEOUT_MS;
    this.name = options.name ?? `group [${members.join(', ')}]`;
    if (this.index < 0) throw new Error(`Rank ${rank} is not a member of ${this.name}.`);
    if (new Set(members).size !== members.length) throw new Error(`${this.name} lists a rank twice.`);
    for (const r of members) {
      if (r !== rank && !links.has(r)) throw new Error(`Rank ${rank} has no connection to rank ${r} of ${this.name}.`);
    }
  }

  /** The member `offset` places after this one in ring order (negative: before). */
  rankAt(offset: number): number {
    const n = this.size;
    return this.members[(((this.index + offset) % n) + n) % n];
  }

  link(rank: number): Connection {
    const conn = this.links.get(rank);
    if (!conn) throw new Error(`Rank ${this.rank} has no connection to rank ${rank} of ${this.name}.`);
    return conn;
  }

  /** "rank 3 (127.0.0.1:40211)": how errors name a peer. */
  describe(rank: number): string {
    return `rank ${rank} (${this.links.get(rank)?.peer ?? 'no connection'})`;
  }

  /** The other members, in ring order starting after this one. */
  others(): number[] {
    return Array.from({ length: this.size - 1 }, (_, i) => this.rankAt(i + 1));
  }
}
