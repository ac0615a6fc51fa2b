import type { ModelGraph } from '../model/graph.js';
import type { Plan } from './plan.js';
import { balancedStages } from './presets.js';
import { virtualNodeTotal } from './virtualNodes.js';

/**
 * VirtualFlow's elasticity as a plan transformation. The global batch is a fixed number V of virtual
 * nodes, and the hyperparameters are tied to V, not to the hardware: a job that gains or loses devices
 * keeps its stages, tensor-parallel degrees, micro-batches, V and global batch, and only changes how
 * many data-parallel replicas run the V virtual nodes, and which replica runs how many. The
 * mathematics of a step is unchanged (virtual nodes are summed, whoever runs them).
 */

/** Devices one data-parallel replica of the whole pipeline needs: every stage's tensor-parallel degree. */
export function devicesPerReplica(plan: Plan): number {
  return plan.stages.reduce((n, stage) => n + stage.tensorParallel, 0);
}

/**
 * Split `total` virtual nodes over replicas in proportion to their speeds (VirtualFlow's
 * heterogeneous allocation), every replica at least one: largest remainders, ties to the earlier
 * replica, so every process derives the same split.
 */
export function proportionalVirtualNodes(total: number, speeds: number[]): number[] {
  const n = speeds.length;
  if (n === 0 || total < n) throw new Error(`Cannot give ${n} replicas at least one of ${total} virtual nodes each.`);
  if (speeds.some((s) => !(s > 0) || !Number.isFinite(s))) throw new Error(`Replica speeds must be positive numbers; got [${speeds.join(', ')}].`);
  const sum = speeds.reduce((a, b) => a + b, 0);
  const ideal = speeds.map((s) => (total * s) / sum);
  const counts = ideal.map((x) => Math.max(1, Math.floor(x)));
  // Largest remainders get what is left; where the floor of one is lifted to 1, the biggest counts give back.
  const byRemainder = ideal.map((x, r) => ({ r, rest: x - Math.floor(x) })).sort((a, b) => b.rest - a.rest || a.r - b.r);
  let left = total - counts.reduce((a, b) => a + b, 0);
  for (let i = 0; left > 0; i = (i + 1) % n, left--) counts[byRemainder[i].r] += 1;
  while (left < 0) {
    const r = counts.indexOf(Math.max(...counts));
    counts[r] -= 1;
    left += 1;
  }
  return counts;
}

/**
 * The plan for `devices` agents: as many data-parallel replicas as fit (at most V, each needs a
 * virtual node), V spread evenly or by `speeds` (one per replica). Explicit device lists are dropped:
 * ranks run on the device with their own index. Throws when not even one replica fits — the caller
 * then falls back to a checkpoint and a new plan.
 */
export function planForDevices(plan: Plan, devices: number, speeds?: number[]): Plan {
  const perReplica = devicesPerReplica(plan);
  const total = virtualNodeTotal(plan);
  const replicas = Math.min(Math.floor(devices / perReplica), total);
  if (replicas < 1) {
    throw new Error(`${devices} device(s) cannot hold one replica of the pipeline, which needs ${perReplica} (one per stage and tensor shard).`);
  }
  if (speeds && speeds.length !== replicas) throw new Error(`Got ${speeds.length} replica speeds for ${replicas} replicas.`);
  const counts = speeds ? proportionalVirtualNodes(total, speeds) : Array.from({ length: replicas }, (_, r) => Math.floor(total / replicas) + (r < total % replicas ? 1 : 0));
  return {
    ...plan,
    stages: plan.stages.map(({ devices: _devices, ...stage }) => ({ ...stage, dataParallel: replicas })),
    virtualNodes: { total, perReplica: counts },
  };
}

/**
 * Re-plan onto devices too few for one replica of the pipeline (its last replica of a stage was
 * lost): as many stages as devices, re-balanced by cost, no operator sharding, one replica running
 * all V virtual nodes. The global batch, micro-batches and V stay, so the mathematics does too.
 */
export function planOnFewerDevices(plan: Plan, model: ModelGraph, devices: number): Plan {
  if (devices < 1) throw new Error('No device is left to run the job on.');
  const stages = balancedStages(model, Math.min(devices, plan.stages.length));
  const total = virtualNodeTotal(plan);
  return {
    ...plan,
    stages: stages.map((layers) => ({ layers, dataParallel: 1, tensorParallel: 1 })),
    sharding: {},
    virtualNodes: { total, perReplica: [total] },
  };
}

/**
 * Take another plan's virtual-node split onto a running plan, refusing anything else: a re-balance
 * may move virtual nodes between replicas, never change the stages, the replicas or V.
 */
export function remapVirtualNodes(current: Plan, next: Plan): Plan {
  const same = (a: Plan, b: Plan) =>
    a.stages.length === b.stages.length &&
    a.stages.every((s, i) => s.dataParallel === b.stages[i].dataParallel && s.tensorParallel === b.stages[i].tensorParallel && s.layers.join() === b.stages[i].layers.join()) &&
    virtualNodeTotal(a) === virtualNodeTotal(b) &&
    a.globalBatch === b.globalBatch;
  if (!same(current, next)) throw new Error('A re-mapping may only move virtual nodes between the same replicas; the stages, replicas, V or global batch differ.');
  return { ...current, virtualNodes: next.virtualNodes };
}
