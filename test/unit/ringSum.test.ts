import { describe, expect, it } from 'vitest';
import { addInto } from '../../agents/comm/chunking.js';
import { acquireArena, collectiveArray, homeArena, releaseArena, simdAvailable, SumArena } from '../../agents/comm/sumArena.js';

/** Floats of every kind an addition can meet: tiny, huge, negative zero, subnormal, infinite, cancelling. */
function awkward(length: number, seed: number): Float32Array {
  const special = [0, -0, 1e-40, -1e-42, 3.4e38, -3.4e38, Infinity, -Infinity, 1, -1, 1e-7, 16777217];
  let x = seed;
  return Float32Array.from({ length }, (_, i) => {
    x = (x * 1103515245 + 12345) % 2147483648;
    return i % 7 === 0 ? special[x % special.length] : (x / 2147483648 - 0.5) * 10 ** ((x % 20) - 10);
  });
}

const bits = (a: Float32Array) => Buffer.from(a.buffer, a.byteOffset, a.byteLength);

describe('sum arena (the adds of the ring reduce-scatter)', () => {
  it('adds bit for bit as JavaScript does, with SIMD and without, at every length, block and tail', () => {
    for (const useSimd of [true, false]) {
      const arena = new SumArena(1 << 20, useSimd);
      for (const length of [0, 1, 3, 15, 16, 17, 63, 64, 65, 1000, 8191, 8192, 8193, 20_011]) {
        for (const writeBack of [false, true]) {
          arena.reset();
          const mine = awkward(length, length + 1);
          const incoming = awkward(length, length + 2);
          const expected = mine.slice();
          addInto(expected, incoming);
          const slot = arena.take(length);
          slot.set(incoming);
          const before = mine.slice();
          arena.accumulate(slot, mine, writeBack);
          expect(bits(slot).equals(bits(expected))).toBe(true);
          expect(bits(mine).equals(bits(writeBack ? expected : before))).toBe(true);
        }
      }
    }
  });

  it('adds in place, bit for bit the same, when this member\'s values live in the arena (collectiveArray)', () => {
    for (const length of [1, 15, 16, 17, 8193, 20_011]) {
      const home = collectiveArray(length, SumArena.bytesFor([length]));
      const arena = homeArena(home, SumArena.bytesFor([length]))!;
      expect(arena.home).toBe(home);
      for (const step of ['accumulate', 'accumulate+writeBack', 'total'] as const) {
        arena.reset();
        const mine = awkward(length, length + 3);
        const incoming = awkward(length, length + 4);
        const expected = mine.slice();
        addInto(expected, incoming);
        home.set(mine);
        const slot = arena.take(length);
        slot.set(incoming);
        if (step === 'total') arena.total(slot, home);
        else arena.accumulate(slot, home, step === 'accumulate+writeBack');
        // total() leaves the sum in this member's array only; accumulate() always in the slot.
        if (step !== 'total') expect(bits(slot).equals(bits(expected))).toBe(true);
        expect(bits(home).equals(bits(step === 'accumulate' ? mine : expected))).toBe(true);
      }
      releaseArena(arena);
    }
  });

  it('lends a collectiveArray\'s arena to one collective at a time, and only when its scratch suffices', () => {
    const data = collectiveArray(1000, 8192);
    const arena = homeArena(data, 8192);
    expect(arena).not.toBeNull();
    expect(homeArena(data, 8192)).toBeNull(); // busy: a second collective takes a pooled arena
    releaseArena(arena!);
    expect(homeArena(data, 8192)).toBe(arena);
    releaseArena(arena!);
    expect(homeArena(data, 1 << 20)).toBeNull(); // needs more scratch than it has
    expect(homeArena(new Float32Array(1000), 0)).toBeNull(); // an ordinary array has none
    expect(acquireArena(8192)).not.toBe(arena); // never pooled
  });

  it('uses wasm SIMD on this Node', () => {
    expect(simdAvailable()).toBe(true);
  });

  it('hands out aligned, disjoint views and refuses to overflow', () => {
    const arena = new SumArena(SumArena.bytesFor([10, 20]));
    const x = arena.take(10);
    const y = arena.take(20);
    expect(x.byteOffset % 64).toBe(0);
    expect(y.byteOffset % 64).toBe(0);
    expect(y.byteOffset).toBeGreaterThanOrEqual(x.byteOffset + x.byteLength);
    expect(() => arena.take(1 << 20)).toThrow(/cannot hold/);
  });

  it('reuses idle arenas that are large enough', () => {
    const first = acquireArena(100_000);
    releaseArena(first);
    expect(acquireArena(50_000)).toBe(first);
    const other = acquireArena(10_000);
    expect(other).not.toBe(first);
  });
});
