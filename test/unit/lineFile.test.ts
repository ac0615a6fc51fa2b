import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { LineFile } from '../../agents/coordinator/lineFile.js';

/** catchUp over a whole list (EventLog passes its window the same way). */
const upTo = (lines: LineFile, items: unknown[], now: number, force = false) => lines.catchUp(items.length, (i) => items[i], now, force);

const work = mkdtempSync(join(tmpdir(), 'shoal-line-file-'));
afterAll(() => rmSync(work, { recursive: true, force: true }));

describe('LineFile', () => {
  it('appends each item once, as one JSON line, in order', () => {
    const file = join(work, 'events.jsonl');
    const lines = new LineFile(file, 0);
    const items: unknown[] = [{ a: 1 }];
    expect(upTo(lines, items, 0)).toEqual({});
    items.push({ b: 2 }, 'three');
    expect(upTo(lines, items, 1)).toEqual({});
    expect(upTo(lines, items, 2)).toEqual({});
    lines.close();
    expect(readFileSync(file, 'utf8')).toBe('{"a":1}\n{"b":2}\n"three"\n');
  });

  it('continues a history, cutting a line a crash left torn', () => {
    const file = join(work, 'restarted.jsonl');
    writeFileSync(file, '{"a":1}\n{"b":2}\n{"c":');
    const lines = new LineFile(file, 2);
    upTo(lines, [{ a: 1 }, { b: 2 }, { c: 3 }], 0);
    lines.close();
    expect(readFileSync(file, 'utf8')).toBe('{"a":1}\n{"b":2}\n{"c":3}\n');
  });

  it('a refused write is said once and leaves no torn line (/dev/full refuses every write with ENOSPC)', () => {
    const lines = new LineFile('/dev/full', 0);
    const items = [{ a: 1 }];
    expect(upTo(lines, items, 0).refused?.message).toMatch(/ENOSPC/);
    // Within the retry interval nothing is tried; after it, the refusal goes on without a second word.
    expect(upTo(lines, items, 1_000)).toEqual({});
    expect(upTo(lines, items, 10_000)).toEqual({});
    expect(upTo(lines, items, 10_001, true)).toEqual({});
    lines.close();
  });
});
