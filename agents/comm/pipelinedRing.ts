import { byteView, SegmentLayout, segmentsFor } from './chunking.js';
import type { CollectiveCall } from './collectiveCall.js';
import { bytesToFloats } from '../../engine/wire/frame.js';
import { acquireArena, collectiveArray, homeArena, releaseArena, SumArena } from './sumArena.js';

export interface RingOptions {
  /** Run the reduce-scatter half (member i ends owning the sum of chunk i). */
  reduceScatter: boolean;
  /** Run the all-gather half (every member ends with every owner's chunk). */
  allGather: boolean;
  /** Segments travelling the ring at once (each worker takes one segment through both halves, then the next). */
  window: number;
}

/**
 * segmentBytes: bytes per message — big enough to amortise per-message costs (JS, system calls,
 * wake-ups, cache misses on each side of a context switch), small enough to pipeline. window:
 * segments in flight at once. Measured on 2 quiet cores with SIMD sums: 4 MiB segments cost 10–25%
 * less CPU per all-reduce than 1 MiB ones with 4 processes (oversubscribed, where CPU is the time),
 * and no more with 2. One segment in flight beat two at every size from 256 KiB to 256 MiB, with 2
 * and 4 processes (4 procs, 64 MiB: 125 vs 139 ms; 2 procs, 1 MiB: 0.77 vs 1.17 ms): here the
 * sockets' kernel copies and the adds compete for the same two cores, and a second segment in flight
 * only added wake-ups and cache misses. Hosts with cores to spare may gain from `window: 2`.
 */
export const RING_DEFAULTS = { segmentBytes: 4 << 20, window: 1 } as const;

/** Receive slots per worker (at most): a partial sum is sent from its slot while the next two steps receive into the others. */
const SLOTS = 3;

/** Arena bytes a reduce-scatter over this layout takes: `window` workers' slots of the longest segment. */
function scratchBytes(layout: SegmentLayout, window: number): number {
  const slots = Math.min(window, layout.segments) * Math.min(SLOTS, layout.parts - 1);
  return SumArena.bytesFor(new Array<number>(slots).fill(layout.maxSegment()));
}

/**
 * A Float32Array to all-reduce again and again (a gradient bucket) in a group of `members`, with the
 * default ring tuning: it comes with the scratch its reductions need, so they add in place
 * (collectiveArray). Other groups or tuning still work with it, through pooled arenas.
 */
export function ringArray(length: number, members: number): Float32Array {
  if (members < 2) return new Float32Array(length);
  const layout = new SegmentLayout(length, members, segmentsFor(length, members, RING_DEFAULTS.segmentBytes, RING_DEFAULTS.window));
  return collectiveArray(length, scratchBytes(layout, RING_DEFAULTS.window));
}

/**
 * Ring reduce-scatter and/or all-gather over `data`, by segments. Each segment runs the classic ring
 * (n−1 steps per half, each member sending 1/n of the segment per step, so every member sends
 * 2(n−1)/n of the array in all — bandwidth-optimal). Up to `window` workers each take a segment
 * through both halves, then the next; sends are asynchronous, so a partial sum leaves while the next
 * step's chunk is received and added. (The default window is 1: see RING_DEFAULTS.)
 *
 * Reduce-scatter works in a SumArena (sumArena.ts): each incoming chunk lands straight in a slot of
 * the arena and this member's values are added to it with SIMD — in place when `data` comes from
 * collectiveArray (it lives in the arena's memory), else copied in beside the slot a block at a time —
 * and the partial sum is sent on from the slot. So, in an all-reduce, partial sums never touch `data`;
 * only the member's own total is written into it (the all-gather overwrites every other chunk
 * anyway). The all-gather receives straight into `data` and forwards from there.
 *
 * Chunk c's sum is formed on one path (starting at member c+1, ending at its owner c) and then only
 * copied, so every member ends with bit-identical values.
 */
export async function pipelinedRing(call: CollectiveCall, data: Float32Array, layout: SegmentLayout, options: RingOptions): Promise<void> {
  const { group } = call;
  const n = group.size;
  const me = group.index;
  const next = group.rankAt(1);
  const prev = group.rankAt(-1);
  const chunk = (offset: number) => (((me + offset) % n) + n) % n;
  const region = (c: number, j: number) => {
    const [a, b] = layout.bounds(c, j);
    return data.subarray(a, b);
  };
  const workers = Math.min(options.window, layout.segments);
  const longest = layout.maxSegment();
  const slotsPerWorker = Math.min(SLOTS, n - 1);
  const scratch = scratchBytes(layout, options.window);
  // An array from collectiveArray brings its own arena: sums are formed in place, nothing staged.
  const arena = options.reduceScatter ? (homeArena(data, scratch) ?? acquireArena(scratch)) : null;
  const fromArena: Promise<void>[] = [];

  async function segment(j: number, slots: Float32Array[], busy: Array<Promise<void> | null>): Promise<void> {
    let sentFromData: Promise<void> | null = null;
    if (options.reduceScatter) {
      let carry = -1; // the slot holding the partial sum to send at this step
      let carried: Float32Array | null = null;
      for (let s = 0; s < n - 1; s++) {
        const step = `rs${s}/j${j}`;
        await call.whenWritable(next);
        if (carry < 0) {
          sentFromData = call.send(next, step, byteView(region(chunk(-s - 1), j)));
        } else {
          const flushed = call.send(next, step, byteView(carried!));
          busy[carry] = flushed;
          fromArena.push(flushed);
        }
        const target = region(chunk(-s - 2), j);
        const k = (carry + 1) % slotsPerWorker;
        const wait = busy[k];
        if (wait) {
          await wait;
          busy[k] = null;
        }
        const recv = slots[k].subarray(0, target.length);
        const sink = byteView(recv);
        const got = await call.receive(prev, step, sink);
        checkLength(got, target.length, step);
        if (target.length > 0) {
          if (got !== sink) recv.set(bytesToFloats(got)); // arrived before its receive was posted
          // An all-gather overwrites every chunk but this member's own: only totals need writing back.
          if (s === n - 2) arena!.total(recv, target);
          else arena!.accumulate(recv, target, !options.allGather);
        }
        carry = k;
        carried = recv;
      }
    }
    if (options.allGather) {
      // The all-gather overwrites the chunk this member sent from `data` during reduce-scatter: its
      // bytes must have left (the socket writes from this very memory) before the totals land on it.
      if (sentFromData) await sentFromData;
      for (let s = 0; s < n - 1; s++) {
        await call.whenWritable(next);
        call.send(next, `ag${s}/j${j}`, byteView(region(chunk(-s), j)));
        const target = byteView(region(chunk(-s - 1), j));
        const got = await call.receive(prev, `ag${s}/j${j}`, target);
        checkLength(got, target.length / 4, `ag${s}/j${j}`);
        if (got && got !== target) target.set(got);
      }
    }
  }

  function checkLength(got: Uint8Array | undefined, floats: number, step: string): void {
    const bytes = got?.byteLength ?? 0;
    if (bytes !== floats * 4) throw call.error(`at ${step}: expected ${floats * 4} bytes from ${group.describe(prev)}, got ${bytes} (do all members pass arrays of the same length?)`);
  }

  let nextSegment = 0;
  const worker = async () => {
    const slots = arena ? Array.from({ length: slotsPerWorker }, () => arena.take(longest)) : [];
    const busy: Array<Promise<void> | null> = slots.map(() => null);
    while (nextSegment < layout.segments) await segment(nextSegment++, slots, busy);
  };
  await Promise.all(Array.from({ length: workers }, worker));
  if (arena) {
    // Sends from the arena must have left before another collective may write into it. (After a
    // failure the arena is not given back: a send may still be reading it.)
    await Promise.all(fromArena);
    releaseArena(arena);
  }
}
