import { existsSync, readFileSync, renameSync, writeFileSync } from 'node:fs';
import { dirname, join, resolve } from 'node:path';
import type { EventFrame } from '../../engine/protocol/controlWire.js';
import type { JobEvent } from '../../engine/protocol/events.js';
import type { Connection } from '../../engine/wire/connection.js';
import { LineFile } from './lineFile.js';

/**
 * The job's history as the coordinator saw it, fanned out to every attached studio. A studio that
 * attaches late (or re-attaches) first receives what it missed, from the index it asks for.
 */
export class EventLog {
  readonly events: JobEvent[] = [];
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
   */
  constructor(file?: string, options: { continues?: boolean } = {}) {
    if (file && options.continues && existsSync(file)) {
      for (const line of readFileSync(file, 'utf8').split('\n')) {
        if (!line.trim()) continue;
        try {
          this.events.push(JSON.parse(line) as JobEvent);
        } catch {
          // A line cut short by the crash: the ones after it are still this job's.
        }
      }
    }
    if (file) {
      this.disk = new LineFile(file, this.events.length);
      this.file = resolve(file);
    }
  }

  emit(event: JobEvent): void {
    const index = this.events.length;
    this.events.push(event);
    if (this.file && !existsSync(this.file)) this.folderGone(this.file);
    this.persist(false);
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
    const { refused, caughtUp } = this.disk.catchUp(this.events, Date.now(), force);
    if (refused) {
      const message = `The job's event log ${this.file} cannot be written (${refused.message}): free space there. Events are kept in memory and written as soon as it has room; attached studios get them meanwhile.`;
      process.stderr.write(`[coordinator] ${message}\n`);
      this.emit({ type: 'log', level: 'error', host: 'coordinator', rank: null, message, time: Date.now() });
    }
    if (caughtUp) this.emit({ type: 'log', level: 'info', host: 'coordinator', rank: null, message: `The job's event log ${this.file} caught up: ${caughtUp.lines} events written after ${(caughtUp.waitedMs / 1000).toFixed(0)} s without room.`, time: Date.now() });
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
    for (let i = Math.max(0, since); i < this.events.length; i++) conn.send({ type: 'event', index: i, event: this.events[i] } satisfies EventFrame);
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
