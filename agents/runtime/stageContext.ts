import type { ModelGraph } from '../../engine/model/graph.js';
import type { Placement } from '../../engine/plan/placement.js';
import { placements, rankOf } from '../../engine/plan/placement.js';
import type { Plan } from '../../engine/plan/plan.js';
import type { PeerMesh } from '../comm/peerMesh.js';
import type { MnistData } from '../data/mnist.js';
import type { Optimizer } from '../exec/optimizer.js';
import type { StageModule } from '../exec/stageModule.js';

/** Everything one agent needs to execute its part of a plan. */
export interface StageContext {
  plan: Plan;
  model: ModelGraph;
  me: Placement;
  module: StageModule;
  optimizer: Optimizer;
  mesh: PeerMesh;
  data: MnistData;
  /** Classes of the task the model is trained on (the width of its logits). */
  numClasses: number;
  /** Rank of the previous / next stage's agent serving the same replica; null at the ends. */
  prevRank: number | null;
  nextRank: number | null;
  /** Ranks of this stage's data-parallel group, in ring order. */
  dataParallelGroup: number[];
}

/** The ranks an agent exchanges tensors with: pipeline neighbours and its data-parallel group. */
export function neighbours(plan: Plan, me: Placement): { prevRank: number | null; nextRank: number | null; dataParallelGroup: number[] } {
  const last = plan.stages.length - 1;
  return {
    prevRank: me.stage > 0 ? rankOf(plan, me.stage - 1, me.replica) : null,
    nextRank: me.stage < last ? rankOf(plan, me.stage + 1, me.replica) : null,
    dataParallelGroup: placements(plan)
      .filter((p) => p.stage === me.stage)
      .map((p) => p.rank),
  };
}
