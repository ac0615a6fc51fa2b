import { closeSync, fstatSync, ftruncateSync, openSync, readSync, writeSync } from 'node:fs';

/** A write the disk refused is tried again at most this often (each try may write and undo a backlog). */
const RETRY_MS = 5_000;

/**
 * A file of one line per item (the job's events.jsonl: line i is event i), appended as items come.
 * A write the disk refuses (full, or failing) is undone to the last whole line, so no torn line is
 * left, and the items not written stay in the caller's list: the next `catchUp` after RETRY_MS writes
 * them all, in order. Nothing is dropped while the disk is full; the file catches up once there is space.
 */
export class LineFile {
  private readonly fd: number;
  /** Bytes of whole lines on disk. */
  private bytes: number;
  /** Items on disk. */
  private lines: number;
  private lastTry = -Infinity;
  /** When the disk first refused the backlog now waiting (null: none waits). */
  private behindSince: number | null = null;

  /** Open `file` for appending; it already holds `lines` items (a restarted coordinator's history). A torn last line is cut. */
  constructor(file: string, lines: number) {
    this.fd = openSync(file, 'a+', 0o600);
    this.bytes = wholeLinesLength(this.fd);
    if (this.bytes < fstatSync(this.fd).size) ftruncateSync(this.fd, this.bytes);
    this.lines = lines;
  }

  /** Items on disk (the first `written` of the caller's list). */
  get written(): number {
    return this.lines;
  }

  /**
   * Write items `written`..count−1 (`item(i)` is item i) as lines. `force` tries now even within
   * RETRY_MS of the last refusal (the job's end). Returns what changed: the disk's refusal (when it
   * begins), or a backlog written.
   */
  catchUp(count: number, item: (index: number) => unknown, now: number, force = false): { refused?: Error; caughtUp?: { lines: number; waitedMs: number } } {
    if (this.lines >= count) return {};
    if (this.behindSince !== null && !force && now - this.lastTry < RETRY_MS) return {};
    this.lastTry = now;
    const backlog = count - this.lines;
    try {
      for (; this.lines < count; this.lines++) {
        const line = Buffer.from(JSON.stringify(item(this.lines)) + '\n');
        for (let at = 0; at < line.length; ) at += writeSync(this.fd, line, at);
        this.bytes += line.length;
      }
    } catch (err) {
      try {
        ftruncateSync(this.fd, this.bytes);
      } catch {
        // The next write appends after what is there; the reader skips a torn line.
      }
      if (this.behindSince !== null) return {};
      this.behindSince = now;
      return { refused: err as Error };
    }
    const since = this.behindSince;
    this.behindSince = null;
    return since === null ? {} : { caughtUp: { lines: backlog, waitedMs: now - since } };
  }

  close(): void {
    closeSync(this.fd);
  }
}

/** The length of `fd`'s content up to and including its last newline. */
function wholeLinesLength(fd: number): number {
  const size = fstatSync(fd).size;
  const tail = Buffer.alloc(Math.min(size, 64 * 1024));
  for (let end = size; end > 0; ) {
    const start = Math.max(0, end - tail.length);
    const n = readSync(fd, tail, 0, end - start, start);
    const newline = tail.subarray(0, n).lastIndexOf(0x0a);
    if (newline >= 0) return start + newline + 1;
    end = start;
  }
  return 0;
}
