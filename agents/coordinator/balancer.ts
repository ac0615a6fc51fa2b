import type { Placement } from '../../engine/plan/placement.js';
import { proportionalVirtualNodes } from '../../engine/plan/elastic.js';
import type { Plan } from '../../engine/plan/plan.js';
import { virtualNodeTotal, virtualNodesPerReplica } from '../../engine/plan/virtualNodes.js';
import type { Message } from '../../engine/wire/frame.js';

/** Observed steps before a first judgement, and between two changes: speeds need a few samples. */
const SETTLE_STEPS = 3;
/** Re-balance only for a predicted gain of at least this much: moving virtual nodes is not free. */
const MIN_GAIN = 0.1;
/** Weight of the newest step in the moving average of a replica's time per virtual node. */
const SMOOTHING = 0.5;

/**
 * VirtualFlow's heterogeneous allocation, kept up to date: each data-parallel replica's time per
 * virtual node (its slowest agent's compute time in a step over the virtual nodes it ran), smoothed
 * over steps; when giving each replica virtual nodes in proportion to its speed would shorten the
 * step by at least 10%, it proposes that split. Speeds that drift are followed the same way.
 */
export class VirtualNodeBalancer {
  private msPerNode: number[] | null = null;
  private observed = 0;

  /** Forget what was measured (the replicas changed). */
  reset(): void {
    this.msPerNode = null;
    this.observed = 0;
  }

  observe(plan: Plan, layout: Placement[], replies: Message[]): void {
    const perReplica = virtualNodesPerReplica(plan);
    const replicaMs = perReplica.map(() => 0);
    for (const m of replies) {
      const { replica } = layout[Number(m.header.rank)];
      replicaMs[replica] = Math.max(replicaMs[replica], Number(m.header.computeMs) || 0);
    }
    const sample = replicaMs.map((ms, r) => ms / perReplica[r]);
    this.msPerNode = this.msPerNode ? this.msPerNode.map((old, r) => (1 - SMOOTHING) * old + SMOOTHING * sample[r]) : sample;
    this.observed += 1;
  }

  /** A better split of the virtual nodes, with the predicted step compute before and after, or null. */
  proposal(plan: Plan): { perReplica: number[]; beforeMs: number; afterMs: number } | null {
    const current = virtualNodesPerReplica(plan);
    if (!this.msPerNode || this.observed < SETTLE_STEPS || current.length < 2 || this.msPerNode.some((t) => !(t > 0))) return null;
    const t = this.msPerNode;
    const perReplica = proportionalVirtualNodes(virtualNodeTotal(plan), t.map((ms) => 1 / ms));
    const beforeMs = Math.max(...current.map((n, r) => n * t[r]));
    const afterMs = Math.max(...perReplica.map((n, r) => n * t[r]));
    if (afterMs > (1 - MIN_GAIN) * beforeMs) return null;
    return { perReplica, beforeMs, afterMs };
  }
}
