import { chunkBounds } from '../comm/chunking.js';
import { placements, type Placement } from '../../engine/plan/placement.js';
import type { Plan } from '../../engine/plan/plan.js';

/** Rows [from, to) of a micro-batch that travel between this agent and `rank` of a neighbouring stage. */
export interface RowPiece {
  rank: number;
  from: number;
  to: number;
}

/** The rows of an n-row micro-batch that shard `shard` of a `shards`-way stage holds (S0). */
export function rowsOfShard(rows: number, shards: number, shard: number): [number, number] {
  return chunkBounds(rows, shards, shard);
}

/**
 * Which rows of this agent's slice of the micro-batch come from (or go to) which agent of the stage
 * `stage` (a neighbour), when both stages split the batch by rows over their tensor-parallel shards,
 * possibly of different degrees. With one shard on each side it is the whole micro-batch, one piece.
 * Pieces are in row order, so concatenating them rebuilds this agent's rows.
 */
export function rowPieces(plan: Plan, me: Placement, stage: number, rows: number): RowPiece[] {
  if (stage < 0 || stage >= plan.stages.length) return [];
  const [a, b] = rowsOfShard(rows, plan.stages[me.stage].tensorParallel, me.shard);
  const shards = plan.stages[stage].tensorParallel;
  const all = placements(plan);
  const pieces: RowPiece[] = [];
  for (let k = 0; k < shards; k++) {
    const [c, d] = rowsOfShard(rows, shards, k);
    const from = Math.max(a, c);
    const to = Math.min(b, d);
    if (from >= to) continue;
    const rank = all.find((p) => p.stage === stage && p.replica === me.replica && p.shard === k)!.rank;
    pieces.push({ rank, from, to });
  }
  return pieces;
}

/** Every agent of the neighbouring stages this agent may exchange rows with, for any batch size. */
export function boundaryRanks(plan: Plan, me: Placement): number[] {
  return placements(plan)
    .filter((p) => Math.abs(p.stage - me.stage) === 1 && p.replica === me.replica)
    .map((p) => p.rank);
}
