import type { LayerSharding } from '../plan/sbp.js';

/** output: only the wide output layer (Whale); megatron: also transformer dense pairs. */
export type ShardMode = 'none' | 'output' | 'megatron';

/** One pipeline stage of a candidate: layers [from, to) in graph order, and who runs them. */
export interface StageLayout {
  from: number;
  to: number;
  dataParallel: number;
  tensorParallel: number;
  /** Replica-major, then shard, as in Plan.stages[].devices. */
  devices: number[];
}

/**
 * The structural part of a candidate plan — stages, devices, operator sharding, virtual nodes —
 * before the knobs that do not move layers (micro-batches, schedule, ZeRO) are chosen.
 */
export interface Layout {
  /** Which layers a tensor-parallel group splits (none when tensorParallel is 1). */
  shardMode: ShardMode;
  placement: 'blocked' | 'interleaved';
  stages: StageLayout[];
  sharding: Record<string, LayerSharding>;
  /** VirtualFlow: virtual nodes per replica (same in every stage), when speeds differ. */
  virtualNodes?: { total: number; perReplica: number[] };
  devicesUsed: number;
}

/** Split `total` into whole shares ∝ weights, each at least 1 (largest remainder). */
export function apportion(total: number, weights: number[]): number[] {
  const sum = weights.reduce((a, b) => a + b, 0);
  const spare = total - weights.length;
  const exact = weights.map((w) => (spare * w) / sum);
  const shares = exact.map((x) => Math.floor(x));
  let left = spare - shares.reduce((a, b) => a + b, 0);
  const order = exact.map((x, i) => [x - Math.floor(x), i] as const).sort((a, b) => b[0] - a[0]);
  for (const [, i] of order) {
    if (left-- <= 0) break;
    shares[i] += 1;
  }
  return shares.map((s) => s + 1);
}

export const divisors = (n: number): number[] => Array.from({ length: n }, (_, i) => i + 1).filter((k) => n % k === 0);
export const powersOfTwo = (max: number): number[] => {
  const out: number[] = [];
  for (let k = 1; k <= max; k *= 2) out.push(k);
  return out;
};
