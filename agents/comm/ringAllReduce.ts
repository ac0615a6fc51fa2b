import { allReduce } from './collectives.js';
import type { Connection } from '../../engine/wire/connection.js';
import { ProcessGroup, type ProcessGroupOptions } from './processGroup.js';

/**
 * Sum a float32 array across a group, in place, identically on every member (the entry point the
 * pipeline step uses). `members` lists the group's ranks in ring order; `links` maps a rank to the
 * connection to it. Large arrays take the pipelined ring (reduce-scatter then all-gather, each member
 * sending 2·(n−1)/n of the array: bandwidth-optimal); small ones a one-round direct exchange.
 */
export function ringAllReduce(
  data: Float32Array,
  myRank: number,
  members: number[],
  links: ReadonlyMap<number, Connection>,
  tag: string,
  options: ProcessGroupOptions = {},
): Promise<void> {
  if (members.length <= 1) return Promise.resolve();
  return allReduce(new ProcessGroup(myRank, members, links, options), data, tag);
}
