import { addInto, byteView, SegmentLayout } from './chunking.js';
import type { CollectiveCall } from './collectiveCall.js';
import { bytesToFloats } from './frame.js';

export interface RingOptions {
  /** Run the reduce-scatter half (member i ends owning the sum of chunk i). */
  reduceScatter: boolean;
  /** Run the all-gather half (every member ends with every owner's chunk). */
  allGather: boolean;
  /** Segments travelling the ring at once: enough to keep the link busy while one is being summed. */
  window: number;
}

/**
 * segmentBytes: bytes per message — big enough to amortise per-message costs (JS, system calls,
 * wake-ups), small enough to pipeline. window: segments in flight at once. Measured on 2 shared
 * cores: window 2 cost no less CPU per all-reduce than 4 but took up to twice as long, because a
 * member that gets the CPU back finds fewer segments ready to work on.
 */
export const RING_DEFAULTS = { segmentBytes: 1 << 20, window: 4 } as const;

/**
 * Ring reduce-scatter and/or all-gather over `data`, pipelined by segments. Each segment runs the
 * classic ring (n−1 steps per half, each member sending 1/n of the segment per step, so every member
 * sends 2(n−1)/n of the array in all — bandwidth-optimal), and up to `window` segments are in flight:
 * while one segment's incoming chunk is being added, the next ones are arriving.
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

  async function segment(j: number, scratch: Float32Array | null): Promise<void> {
    const sent: Promise<void>[] = [];
    if (options.reduceScatter) {
      for (let s = 0; s < n - 1; s++) {
        await call.whenWritable(next);
        sent.push(call.send(next, `rs${s}/j${j}`, byteView(region(chunk(-s - 1), j))));
        const target = region(chunk(-s - 2), j);
        const sink = byteView(scratch!.subarray(0, target.length));
        const got = await call.receive(prev, `rs${s}/j${j}`, sink);
        checkLength(got, target.length, `rs${s}/j${j}`);
        if (target.length > 0) addInto(target, bytesToFloats(got));
      }
    }
    if (options.allGather) {
      // The all-gather overwrites chunks this member sent during reduce-scatter: their bytes must
      // have left (the socket writes from this very memory) before the totals land on them.
      await Promise.all(sent);
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
    const scratch = options.reduceScatter ? new Float32Array(layout.maxSegment()) : null;
    while (nextSegment < layout.segments) await segment(nextSegment++, scratch);
  };
  await Promise.all(Array.from({ length: Math.min(options.window, layout.segments) }, worker));
}
