import { describe, expect, it } from 'vitest';
import type { IndexedJobEvent, JobEvent } from '../../engine/protocol/events.js';
import { EventSequence } from '../../renderer/src/store/eventSequence.js';

/** How the studio folds a job's history and its live stream together: by the index each event carries. */
const log = (message: string): JobEvent => ({ type: 'log', level: 'info', host: 'h', rank: null, message, time: 0 });
const numbered = (events: JobEvent[], from = 0): IndexedJobEvent[] => events.map((event, i) => ({ index: from + i, event }));

describe('EventSequence', () => {
  it('keeps repeated identical events that are different events, and drops a repeat of the same index', () => {
    const same = log('checkpoint saved');
    const events = numbered([same, same, same]);
    const sequence = new EventSequence();
    // The live stream delivered 0 and 1 before the history (0, 1, 2) arrived; then 2 again live.
    expect(sequence.accept(events.slice(0, 2))).toEqual([same, same]);
    expect(sequence.accept(events)).toEqual([same]);
    expect(sequence.accept([events[2]])).toEqual([]);
    expect(sequence.next).toBe(3);
  });

  it('holds live events past a gap until the history before them comes, then applies all in order', () => {
    const events = numbered(Array.from({ length: 6 }, (_, i) => log(`e${i}`)));
    const sequence = new EventSequence();
    expect(sequence.accept([events[4], events[5]])).toEqual([]);
    expect(sequence.hasGap).toBe(true);
    expect(sequence.accept(events.slice(0, 5))).toEqual(events.slice(0, 6).map((e) => e.event));
    expect(sequence.hasGap).toBe(false);
  });

  it('back-fills a 100,000-event history overlapping the live stream, each event once, in order', () => {
    const total = 100_000;
    // Step events of identical content every 1,000: content cannot tell them apart, indices can.
    const all = numbered(Array.from({ length: total }, (_, i) => (i % 1000 === 0 ? log('same') : log(`step ${i}`))));
    const sequence = new EventSequence();
    const applied: JobEvent[] = [];
    // Live events from 99,000 on arrive first (the page subscribed, then fetched the history)...
    applied.push(...sequence.accept(all.slice(99_000)));
    expect(applied).toEqual([]);
    // ...then the history up to 99,500, then live events repeated by a reconnect.
    applied.push(...sequence.accept(all.slice(0, 99_500)));
    applied.push(...sequence.accept(all.slice(98_000)));
    expect(applied.length).toBe(total);
    expect(applied).toEqual(all.map((e) => e.event));
    expect(applied.filter((e) => e.type === 'log' && e.message === 'same')).toHaveLength(100);
    expect(sequence.hasGap).toBe(false);
  });
});
