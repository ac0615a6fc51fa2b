import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { EventLog } from '../../agents/coordinator/eventLog.js';
import type { EventFrame } from '../../engine/protocol/controlWire.js';
import type { JobEvent } from '../../engine/protocol/events.js';
import type { Connection } from '../../engine/wire/connection.js';

const work = mkdtempSync(join(tmpdir(), 'shoal-event-log-'));
afterAll(() => rmSync(work, { recursive: true, force: true }));

const event = (i: number): JobEvent => ({ type: 'log', level: 'info', host: 'coordinator', rank: null, message: `event ${i}`, time: 1_000 + i });

/** A studio's end of the control connection: what the coordinator sends it, in order. */
function studio(): { conn: Connection; frames: EventFrame[] } {
  const frames: EventFrame[] = [];
  const conn = { closed: false, send: (frame: EventFrame) => frames.push(frame), socket: { writableLength: 0 } } as unknown as Connection;
  return { conn, frames };
}
/** How many events the log holds in memory (the bound this file is about). */
const inMemory = (log: EventLog) => (log as unknown as { recent: unknown[] }).recent.length;

describe('EventLog', () => {
  it('keeps only the newest events in memory; a studio attaching from any index gets every event since, older ones read back from the file', () => {
    const file = join(work, 'long.jsonl');
    const log = new EventLog(file, { keepInMemory: 10 });
    const emitted: JobEvent[] = [];
    const emit = (e: JobEvent) => {
      emitted.push(e);
      log.emit(e);
    };
    for (let i = 0; i < 100; i++) emit(event(i));
    expect(log.length).toBe(100);
    expect(inMemory(log)).toBeLessThanOrEqual(15);
    expect(readFileSync(file, 'utf8').trim().split('\n')).toHaveLength(100);
    for (const since of [0, 37, 95, 100]) {
      const { conn, frames } = studio();
      log.attach(conn, since);
      expect(frames.map((f) => f.index)).toEqual(Array.from({ length: emitted.length - since }, (_, k) => since + k));
      expect(frames.map((f) => f.event)).toEqual(emitted.slice(since));
      // And it follows what comes next.
      emit(event(1000 + since));
      expect(frames.at(-1)).toEqual({ type: 'event', index: emitted.length - 1, event: event(1000 + since) });
    }
    expect(inMemory(log)).toBeLessThanOrEqual(15);
  });

  it('without a file every event stays in memory (there is nowhere to read them back from)', () => {
    const log = new EventLog(undefined, { keepInMemory: 10 });
    for (let i = 0; i < 50; i++) log.emit(event(i));
    const { conn, frames } = studio();
    log.attach(conn, 0);
    expect(frames).toHaveLength(50);
    expect(inMemory(log)).toBe(50);
  });

  it('a restarted coordinator continues the history: it replays it once, then serves it as its own', () => {
    const file = join(work, 'restarted.jsonl');
    const first = new EventLog(file, { keepInMemory: 10 });
    for (let i = 0; i < 40; i++) first.emit(event(i));
    const second = new EventLog(file, { continues: true, keepInMemory: 10 });
    expect(second.replayed).toEqual(Array.from({ length: 40 }, (_, i) => event(i)));
    second.forgetReplayed();
    expect(second.replayed).toEqual([]);
    second.emit(event(40));
    const { conn, frames } = studio();
    second.attach(conn, 0);
    expect(frames.map((f) => f.event)).toEqual(Array.from({ length: 41 }, (_, i) => event(i)));
    expect(inMemory(second)).toBeLessThanOrEqual(15);
  });
});
