import type { Placement } from '../../engine/plan/placement.js';
import { proportionalVirtualNodes } from '../../engine/plan/elastic.js';
import type { Plan } from '../../engine/plan/plan.js';
import { virtualNodeTotal, virtualNodesPerReplica } from '../../engine/plan/virtualNodes.js';
import type { Message } from '../../engine/wire/frame.js';

/** Observed steps before a first judgement: speeds need a few samples. */
const FIRST_WINDOW = 3;
/** Each change doubles the steps observed before the next one, up to this many. */
const MAX_WINDOW = 96;
/** Re-balance only for a predicted gain of at least this much: moving virtual nodes is not free. */
const MIN_GAIN = 0.1;
/** Going back to a split already tried in this generation needs this much: its speeds were measured once. */
const RETURN_GAIN = 0.2;

/**
 * VirtualFlow's heterogeneous allocation, kept up to date: each data-parallel replica's time per
 * virtual node (its slowest agent's compute time in a step over the virtual nodes it ran), averaged
 * over a window of steps; when giving each replica virtual nodes in proportion to its speed would
 * shorten the step by at least 10%, it proposes that split.
 *
 * It must not flip-flop: with near-equal replicas, the remainder of an uneven split (4 virtual nodes on
 * 3 replicas) moving from one replica to another looks like a gain whenever measurement noise exceeds
 * 10%. So each change doubles the window the next judgement averages over (3, 6, 12 … 96 steps: the
 * noise shrinks and changes get rarer), and a return to a split tried before needs a 20% gain. Speeds
 * that really drift are still followed.
 */
export class VirtualNodeBalancer {
  private sums: number[] | null = null;
  private observed = 0;
  private window = FIRST_WINDOW;
  private readonly tried = new Set<string>();

  /** Forget everything (the replicas changed: a new generation). */
  reset(): void {
    this.sums = null;
    this.observed = 0;
    this.window = FIRST_WINDOW;
    this.tried.clear();
  }

  /** The coordinator applied a proposal: measure the new split afresh, over a longer window. */
  applied(before: number[], after: number[]): void {
    this.tried.add(before.join(','));
    this.tried.add(after.join(','));
    this.sums = null;
    this.observed = 0;
    this.window = Math.min(MAX_WINDOW, this.window * 2);
  }

  observe(plan: Plan, layout: Placement[], replies: Message[]): void {
    const perReplica = virtualNodesPerReplica(plan);
    const replicaMs = perReplica.map(() => 0);
    for (const m of replies) {
      const { replica } = layout[Number(m.header.rank)];
      replicaMs[replica] = Math.max(replicaMs[replica], Number(m.header.computeMs) || 0);
    }
    const sample = replicaMs.map((ms, r) => ms / perReplica[r]);
    this.sums = this.sums && this.sums.length === sample.length ? this.sums.map((sum, r) => sum + sample[r]) : sample;
    this.observed += 1;
  }

  /** A better split of the virtual nodes, with the predicted step compute before and after, or null. */
  proposal(plan: Plan): { perReplica: number[]; beforeMs: number; afterMs: number } | null {
    const current = virtualNodesPerReplica(plan);
    if (!this.sums || this.observed < this.window || current.length !== this.sums.length || current.length < 2) return null;
    const t = this.sums.map((sum) => sum / this.observed);
    if (t.some((ms) => !(ms > 0))) return null;
    const perReplica = proportionalVirtualNodes(virtualNodeTotal(plan), t.map((ms) => 1 / ms));
    const beforeMs = Math.max(...current.map((n, r) => n * t[r]));
    const afterMs = Math.max(...perReplica.map((n, r) => n * t[r]));
    const gain = this.tried.has(perReplica.join(',')) ? RETURN_GAIN : MIN_GAIN;
    if (afterMs > (1 - gain) * beforeMs) return null;
    return { perReplica, beforeMs, afterMs };
  }
}
