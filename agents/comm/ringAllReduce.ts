import type { Connection } from './connection.js';
import { bytesToFloats, floatsToBytes } from './frame.js';

/**
 * Sum a float32 array across a group with the ring algorithm: reduce-scatter then all-gather, each in
 * n−1 steps, so every member sends 2·(n−1)/n of the array whatever the group size (bandwidth-optimal).
 * `members` lists the group's ranks in ring order; `links` maps a rank to the connection to it.
 * The result is written into `data` in place; every member ends with the identical array because each
 * chunk is summed in the same order on one member and then copied.
 */
export async function ringAllReduce(
  data: Float32Array,
  myRank: number,
  members: number[],
  links: Map<number, Connection>,
  tag: string,
): Promise<void> {
  const n = members.length;
  if (n <= 1) return;
  const me = members.indexOf(myRank);
  if (me < 0) throw new Error(`Rank ${myRank} is not in the all-reduce group [${members.join(', ')}].`);
  const next = links.get(members[(me + 1) % n]);
  const prev = links.get(members[(me - 1 + n) % n]);
  if (!next || !prev) throw new Error(`Rank ${myRank} has no connection to its ring neighbours in group [${members.join(', ')}].`);

  const bounds = (chunk: number): [number, number] => {
    const size = Math.ceil(data.length / n);
    return [Math.min(chunk * size, data.length), Math.min((chunk + 1) * size, data.length)];
  };

  // Reduce-scatter: after step s, this member holds the partial sum of chunk (me − s − 1) mod n.
  for (let s = 0; s < n - 1; s++) {
    const sendChunk = (me - s + n) % n;
    const recvChunk = (me - s - 1 + n) % n;
    const [a, b] = bounds(sendChunk);
    next.send({ type: 'ring', tag: `${tag}/rs${s}` }, floatsToBytes(data.subarray(a, b)));
    const incoming = bytesToFloats((await prev.receive(`${tag}/rs${s}`)).payload);
    const [c] = bounds(recvChunk);
    for (let i = 0; i < incoming.length; i++) data[c + i] += incoming[i];
  }
  // All-gather: pass the fully reduced chunks around the ring.
  for (let s = 0; s < n - 1; s++) {
    const sendChunk = (me + 1 - s + n) % n;
    const recvChunk = (me - s + n) % n;
    const [a, b] = bounds(sendChunk);
    next.send({ type: 'ring', tag: `${tag}/ag${s}` }, floatsToBytes(data.subarray(a, b)));
    const incoming = bytesToFloats((await prev.receive(`${tag}/ag${s}`)).payload);
    const [c] = bounds(recvChunk);
    data.set(incoming, c);
  }
}
