import { addInto, byteView, chunkBounds, SegmentLayout, segmentsFor } from './chunking.js';
import { runCollective, type CollectiveCall } from './collectiveCall.js';
import { bytesToFloats } from '../../engine/wire/frame.js';
import { pipelinedRing, RING_DEFAULTS } from './pipelinedRing.js';
import type { ProcessGroup } from './processGroup.js';

/**
 * Collectives over a ProcessGroup, all in place on float32 arrays of the same length on every member.
 * `tag` must be the same on every member and unique among the collectives in flight on the group
 * (e.g. `s17/allreduce`): it labels the messages and appears in every error. Tuning, when given, must
 * also be the same on every member: it picks the algorithm and the cut of the array.
 */
export interface CollectiveTuning {
  /** At or below this many bytes, all-reduce exchanges whole arrays directly (one round, latency-optimal). */
  smallBytes?: number;
  segmentBytes?: number;
  window?: number;
}

export const SMALL_ALL_REDUCE_BYTES = 64 << 10;
/**
 * Direct exchange sends (n−1)·S per member and n(n−1) messages in all: only worth it for small
 * groups; larger ones take the ring even for small arrays (a tree would be the next step there).
 */
const DIRECT_MAX_MEMBERS = 8;

/**
 * Sum `data` over the group, in place. Small arrays: every member sends its array to every other and
 * sums all contributions in member order (one message latency instead of 2(n−1)). Large arrays:
 * pipelined ring (bandwidth-optimal). Either way the result is bit-identical on every member.
 */
export function allReduce(group: ProcessGroup, data: Float32Array, tag: string, tuning: CollectiveTuning = {}): Promise<void> {
  if (group.size <= 1) return Promise.resolve();
  if (data.byteLength <= (tuning.smallBytes ?? SMALL_ALL_REDUCE_BYTES) && group.size <= DIRECT_MAX_MEMBERS) {
    return runCollective(group, 'all-reduce', tag, (call) => directAllReduce(call, data));
  }
  return ring(group, data, tag, 'all-reduce', true, true, tuning);
}

async function directAllReduce(call: CollectiveCall, data: Float32Array): Promise<void> {
  const { group } = call;
  // Send a copy: the sum is written into `data` before the sends are certain to have left.
  const mine = data.slice();
  for (const r of group.others()) call.send(r, 'x', byteView(mine));
  const received = new Map<number, Float32Array>([[group.rank, mine]]);
  await Promise.all(
    group.others().map(async (r) => {
      const got = bytesToFloats(await call.receive(r, 'x'));
      if (got.length !== data.length) throw call.error(`got ${got.length} values from ${group.describe(r)}, expected ${data.length} (do all members pass arrays of the same length?)`);
      received.set(r, got);
    }),
  );
  data.set(received.get(group.members[0])!);
  for (let i = 1; i < group.size; i++) addInto(data, received.get(group.members[i])!);
}

/**
 * Sum `data` over the group so that member i ends owning chunk i (`chunkBounds(data.length, n, i)`);
 * returns that chunk as a view. The rest of `data` holds partial sums afterwards.
 */
export async function reduceScatter(group: ProcessGroup, data: Float32Array, tag: string, tuning: CollectiveTuning = {}): Promise<Float32Array> {
  const [a, b] = chunkBounds(data.length, group.size, group.index);
  if (group.size > 1) await ring(group, data, tag, 'reduce-scatter', true, false, tuning);
  return data.subarray(a, b);
}

/** Member i contributes chunk i of `data` (`chunkBounds`); afterwards every member holds all chunks. */
export async function allGather(group: ProcessGroup, data: Float32Array, tag: string, tuning: CollectiveTuning = {}): Promise<void> {
  if (group.size > 1) await ring(group, data, tag, 'all-gather', false, true, tuning);
}

function ring(group: ProcessGroup, data: Float32Array, tag: string, name: string, rs: boolean, ag: boolean, tuning: CollectiveTuning): Promise<void> {
  const segmentBytes = tuning.segmentBytes ?? RING_DEFAULTS.segmentBytes;
  const window = tuning.window ?? RING_DEFAULTS.window;
  const layout = new SegmentLayout(data.length, group.size, segmentsFor(data.length, group.size, segmentBytes, window));
  return runCollective(group, name, tag, (call) => pipelinedRing(call, data, layout, { reduceScatter: rs, allGather: ag, window }));
}
