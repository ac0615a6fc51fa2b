import { byteView, chunkBounds } from './chunking.js';
import { runCollective } from './collectiveCall.js';
import type { ProcessGroup } from './processGroup.js';

/** Segment size of a pipelined broadcast: each hop forwards a segment as soon as it has it. */
const BROADCAST_SEGMENT_BYTES = 1 << 20;
/** At or below this, the root sends straight to every member (one hop of latency). */
const DIRECT_BYTES = 64 << 10;

/**
 * Copy the root's `data` into every member's `data`, in place. Large arrays travel a chain in ring
 * order from the root, segment by segment, each member receiving straight into its array and
 * forwarding the segment on at once: the chain is busy on every link at the same time, so time is
 * about S/bandwidth plus one segment per hop, whatever the group size.
 */
export function broadcast(group: ProcessGroup, data: Float32Array, root: number, tag: string): Promise<void> {
  if (group.size <= 1) return Promise.resolve();
  const rootIndex = group.members.indexOf(root);
  if (rootIndex < 0) throw new Error(`rank ${group.rank}: broadcast ${tag}: root rank ${root} is not in ${group.name}.`);
  return runCollective(group, 'broadcast', tag, async (call) => {
    if (data.byteLength <= DIRECT_BYTES) {
      if (group.rank === root) for (const r of group.others()) call.send(r, 'x', byteView(data));
      else await land(await call.receive(root, 'x', byteView(data)), byteView(data), 'x');
      return;
    }
    const hop = (group.index - rootIndex + group.size) % group.size;
    const forward = hop < group.size - 1 ? group.rankAt(1) : null;
    const from = group.rankAt(-1);
    const segments = Math.max(1, Math.ceil(data.byteLength / BROADCAST_SEGMENT_BYTES));
    for (let j = 0; j < segments; j++) {
      const [a, b] = chunkBounds(data.length, segments, j);
      const piece = byteView(data.subarray(a, b));
      if (hop > 0) land(await call.receive(from, `j${j}`, piece), piece, `j${j}`);
      if (forward !== null) {
        await call.whenWritable(forward);
        call.send(forward, `j${j}`, piece);
      }
    }
  });

  function land(got: Uint8Array | undefined, target: Uint8Array, step: string): void {
    if ((got?.byteLength ?? 0) !== target.byteLength) {
      throw new Error(`rank ${group.rank}: broadcast ${tag} at ${step}: expected ${target.byteLength} bytes, got ${got?.byteLength ?? 0} (do all members pass arrays of the same length?)`);
    }
    if (got && got !== target) target.set(got);
  }
}
