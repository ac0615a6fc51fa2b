import { closeSync, existsSync, openSync, readSync, renameSync, writeFileSync } from 'node:fs';
import { dirname, join, resolve } from 'node:path';
import type { EventFrame } from '../../engine/protocol/controlWire.js';
import type { JobEvent } from '../../engine/protocol/events.js';
import type { Connection } from '../../engine/wire/connection.js';
import { LineFile } from './lineFile.js';

/**
 * Events kept in memory for studios that attach: a long job's older ones (a step is about 200 bytes;
 * a million steps would hold hundreds of MB) are read back from events.jsonl when asked for. Events not
 * yet on disk (a full disk) always stay, and so does everything when the job has no file.
 */
const KEEP_IN_MEMORY = 20_000;

/**
 * The job's history as the coordinator saw it, fanned out to every attached studio. A studio that
 * attaches late (or re-attaches) first receives what it missed, from the index it asks for: the newest
 * events from memory, older ones from the file.
 */
export class EventLog {
  /** The history this coordinator continues (after a restart), as read at its start; [] for a new job. */
  private replay: readonly JobEvent[];
  /** Events base..length−1 (older ones are on disk only). */
  private recent: JobEvent[];
  private base = 0;
  private readonly keep: number;
  private readonly subscribers = new Set<Connection>();
  /** events.jsonl, while it is still there to append to. */
  private disk: LineFile | null = null;
  /** The file events are appended to (absolute), while it is still there to append to. */
  private file: string | null = null;

  /**
   * With `file`, every event is also appended to it as one JSON line (line i = event i), so the history
   * outlives this process: a studio that attaches after the job ended reads it from the head host.
   * `continues`: this coordinator was restarted after a crash (agents/coordinator/restart.ts), so the
   * file's events are this job's history so far and are replayed to studios with the new ones.
   * `keepInMemory`: how many of the newest events stay in memory (KEEP_IN_MEMORY).
   */
  constructor(file?: string, options: { continues?: boolean; keepInMemory?: number } = {}) {
    this.keep = options.keepInMemory ?? KEEP_IN_MEMORY;
    this.replay = file && options.continues && existsSync(file) ? [...readEvents(file, 0, Infinity)] : [];
    this.recent = [...this.replay];
    if (file) {
      this.disk = new LineFile(file, this.recent.length);
      this.file = resolve(file);
    }
  }

  /** Events so far (the next one's index). */
  get length(): number {
    return this.base + this.recent.length;
  }

  /** The history a restarted coordinator continues (its team, its clock); read at the start, then let go. */
  get replayed(): readonly JobEvent[] {
    return this.replay;
  }

  forgetReplayed(): void {
    this.replay = [];
  }

  emit(event: JobEvent): void {
    const index = this.length;
    this.recent.push(event);
    if (this.file && !existsSync(this.file)) this.folderGone(this.file);
    this.persist(false);
    this.trim();
    for (const conn of this.subscribers) {
      if (!conn.closed) conn.send({ type: 'event', index, event } satisfies EventFrame);
    }
    if (event.type === 'membership' && this.file) this.writeMembership(event);
  }

  /**
   * Append the events not yet on disk. A full disk must not end the training, nor lose the history:
   * the events wait in memory (where they are anyway) and are written once there is space (./lineFile.ts);
   * both moments are said, as events.
   */
  private persist(force: boolean): void {
    if (!this.disk || !this.file) return;
    const { refused, caughtUp } = this.disk.catchUp(this.length, (i) => this.recent[i - this.base], Date.now(), force);
    if (refused) {
      const message = `The job's event log ${this.file} cannot be written (${refused.message}): free space there. Events are kept in memory and written as soon as it has room; attached studios get them meanwhile.`;
      process.stderr.write(`[coordinator] ${message}\n`);
      this.emit({ type: 'log', level: 'error', host: 'coordinator', rank: null, message, time: Date.now() });
    }
    if (caughtUp) this.emit({ type: 'log', level: 'info', host: 'coordinator', rank: null, message: `The job's event log ${this.file} caught up: ${caughtUp.lines} events written after ${(caughtUp.waitedMs / 1000).toFixed(0)} s without room.`, time: Date.now() });
  }

  /** Let go of the oldest events once they are on disk, in batches (a splice moves the rest). */
  private trim(): void {
    if (!this.disk) return;
    const drop = Math.min(this.recent.length - this.keep, this.disk.written - this.base);
    if (drop < Math.max(1, this.keep / 2)) return;
    this.recent.splice(0, drop);
    this.base += drop;
  }

  /**
   * The newest generation beside the events (membership.json, replaced atomically): `shoal jobs`
   * reads who trains, waits and was lost without fetching the whole history from the head host.
   */
  private writeMembership(event: Extract<JobEvent, { type: 'membership' }>): void {
    const target = join(dirname(this.file!), 'membership.json');
    const tmp = `${target}.${process.pid}.tmp`;
    try {
      writeFileSync(tmp, JSON.stringify(event) + '\n');
      renameSync(tmp, target);
    } catch {
      // Informational only: a full disk must not end the training.
    }
  }

  /**
   * The run folder (or its events.jsonl) was deleted while the job ran: appending to an unlinked file
   * would lose every event without a word, so it is said once, as an error event naming the folder.
   */
  private folderGone(file: string): void {
    this.file = null;
    this.disk?.close();
    this.disk = null;
    const folder = dirname(file);
    const message = existsSync(folder)
      ? `${file} was deleted while the job ran: the events from here on are no longer written to disk (attached studios still get them).`
      : `The run folder ${folder} was deleted while the job ran: its events, job.json, profile and checkpoints are gone from disk and no checkpoint can be saved there; the job fails if its last checkpoint cannot be written.`;
    process.stderr.write(`[coordinator] ${message}\n`);
    this.emit({ type: 'log', level: 'error', host: 'coordinator', rank: null, message, time: Date.now() });
  }

  attach(conn: Connection, since: number): void {
    let index = Math.max(0, since);
    // Older than what memory holds: from the file, read a piece at a time (a deleted file has none to give).
    if (index < this.base && this.file) {
      for (const event of readEvents(this.file, index, this.base)) conn.send({ type: 'event', index: index++, event } satisfies EventFrame);
    }
    for (index = Math.max(index, this.base); index < this.length; index++) conn.send({ type: 'event', index, event: this.recent[index - this.base] } satisfies EventFrame);
    this.subscribers.add(conn);
    conn.onClose = () => this.subscribers.delete(conn);
  }

  /** Resolve once every subscriber has flushed what was written to it (and the file has had a last try). */
  async drain(): Promise<void> {
    this.persist(true);
    await Promise.all(
      [...this.subscribers].map(
        (conn) => new Promise<void>((resolve) => (conn.closed || conn.socket.writableLength === 0 ? resolve() : conn.socket.once('drain', () => resolve()))),
      ),
    );
  }
}

/**
 * Events from..to−1 of an events.jsonl (line i = event i; a line a crash cut short, or an empty one, is
 * skipped as when a restarted coordinator reads it), read 1 MiB at a time.
 */
function* readEvents(file: string, from: number, to: number): Generator<JobEvent> {
  const fd = openSync(file, 'r');
  try {
    const chunk = Buffer.alloc(1 << 20);
    let carry = '';
    let index = 0;
    for (let position = 0; index < to; ) {
      const n = readSync(fd, chunk, 0, chunk.length, position);
      position += n;
      const lines = (carry + chunk.toString('utf8', 0, n)).split('\n');
      carry = n === 0 ? '' : lines.pop()!;
      for (const line of lines) {
        if (!line.trim()) continue;
        let event: JobEvent;
        try {
          event = JSON.parse(line) as JobEvent;
        } catch {
          continue;
        }
        if (index >= from && index < to) yield event;
        index++;
      }
      if (n === 0) break;
    }
  } finally {
    closeSync(fd);
  }
}
