import { placements, type Placement } from '../../engine/plan/placement.js';
import type { Plan } from '../../engine/plan/plan.js';

/**
 * The three communication dimensions of a hybrid plan, as member lists (ranks, in ring order) for
 * one rank:
 * - data: the replicas of the same shard of the same stage — gradients are all-reduced here
 *   (ZeRO reduce-scatters and all-gathers here);
 * - tensor: the shards of the same replica of the same stage — sharded layers' partial sums and
 *   gathers happen here;
 * - pipeline: the stages of the same replica and shard, in stage order — activations flow here.
 * Every rank derives the same lists from the plan, so a group's members agree on its order.
 */
export interface PlanGroups {
  data: number[];
  tensor: number[];
  pipeline: number[];
}

export function planGroups(plan: Plan, rank: number): PlanGroups {
  const all = placements(plan);
  const me = all.find((p) => p.rank === rank);
  if (!me) throw new Error(`Rank ${rank} is not in the plan (it places ${all.length} ranks).`);
  const ranks = (keep: (p: Placement) => boolean) => all.filter(keep).map((p) => p.rank);
  return {
    data: ranks((p) => p.stage === me.stage && p.shard === me.shard),
    tensor: ranks((p) => p.stage === me.stage && p.replica === me.replica),
    // Stages may differ in data/tensor degree; the pipeline partner is the same replica and shard
    // where it exists (stages with fewer replicas or shards are served by their replica/shard 0).
    pipeline: plan.stages.map((stage, s) => {
      const replica = me.replica < stage.dataParallel ? me.replica : 0;
      const shard = me.shard < stage.tensorParallel ? me.shard : 0;
      return all.find((p) => p.stage === s && p.replica === replica && p.shard === shard)!.rank;
    }),
  };
}
