import type { DataSplit } from '../../engine/wire/data/dataset.js';

/** One gather the schedule will make: these arrays of these samples (split indices). */
export interface RowRead {
  names: string[];
  indices: Uint32Array;
}

/** Reads rows off the training thread; resolves null when it cannot (then the rows are read in place). */
export interface RowLoader {
  load(names: string[], indices: Uint32Array): Promise<Float32Array | null>;
  close(): void;
}

/** Exact identity of a read: the arrays and every index, so a prefetched batch is only ever used for the very same rows. */
function keyOf(names: readonly string[], indices: ArrayLike<number>): string {
  return `${names.join('\u0000')}|${Array.prototype.join.call(indices, ',')}`;
}

/**
 * The rows of the next micro-batches, read ahead while the current ones compute.
 *
 * At the start of step s the schedule names every read it will make in steps s .. s+stepsAhead
 * (`plan`); those not already in flight are handed to the loader (a worker thread), in the order they
 * will be needed. `take` then returns the prefetched rows of a read, or reads them in place when none
 * match. Prefetch never decides what is read: a read is matched by its exact arrays and indices,
 * computed by the same data order as always, so a changed plan (a resize, other virtual nodes) or a
 * restart only costs a miss. An evaluation plans the same way, its chunks standing for steps (the
 * validation split's own prefetcher). Memory is bounded: reads not planned any more (past steps, an old plan)
 * are dropped, so at most stepsAhead + 1 steps of this agent's rows are held or in flight. A failed read rejects the `take` that asks for
 * it, with the reader's message (file and rows); one never asked for is dropped silently.
 */
export class RowPrefetcher {
  private readonly pending = new Map<string, { step: number; rows: Promise<Float32Array | null> }>();
  /** Milliseconds `take` has waited for rows since the last `plan` (what the step lost to input). */
  waitMs = 0;
  hits = 0;
  misses = 0;

  constructor(
    private readonly split: DataSplit,
    private readonly loader: RowLoader | null,
    private readonly stepsAhead = 1,
  ) {}

  /** Step `step` begins: issue its reads and the next steps', drop older ones. */
  plan(step: number, readsOf: (step: number) => RowRead[]): void {
    this.waitMs = 0;
    if (!this.loader) return;
    const planned = new Map<string, { step: number; read: RowRead }>();
    for (let s = step; s <= step + this.stepsAhead; s++) {
      try {
        for (const read of readsOf(s)) planned.set(keyOf(read.names, read.indices), { step: s, read });
      } catch {
        break; // e.g. no such step for this data: the step's own read reports it
      }
    }
    // Reads no longer planned (past steps, or a plan that changed since) are dropped.
    for (const key of this.pending.keys()) if (!planned.has(key)) this.pending.delete(key);
    for (const [key, { step: s, read }] of planned) {
      if (this.pending.has(key)) continue;
      const rows = this.loader.load(read.names, read.indices);
      rows.catch(() => undefined); // reported by the take that asks for it, if any
      this.pending.set(key, { step: s, rows });
    }
  }

  /** The rows of a read, packed as DataSplit.gather packs them. */
  async take(names: string[], indices: Uint32Array): Promise<Float32Array> {
    const t0 = performance.now();
    try {
      const key = keyOf(names, indices);
      const entry = this.pending.get(key);
      if (entry) {
        this.pending.delete(key);
        const rows = await entry.rows;
        if (rows) {
          this.hits++;
          return rows;
        }
      }
      this.misses++;
      return this.split.gather(names, indices);
    } finally {
      this.waitMs += performance.now() - t0;
    }
  }

  /** Reads in flight or ready (for tests: the memory bound). */
  get held(): number {
    return this.pending.size;
  }

  close(): void {
    this.pending.clear();
    this.loader?.close();
  }
}
