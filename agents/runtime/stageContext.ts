import type { ModelGraph } from '../../engine/model/graph.js';
import type { Placement } from '../../engine/plan/placement.js';
import { placements, rankOf } from '../../engine/plan/placement.js';
import type { Plan } from '../../engine/plan/plan.js';
import type { PeerMesh } from '../comm/peerMesh.js';
import type { ProcessGroup } from '../comm/processGroup.js';
import type { Dataset } from '../../engine/wire/data/dataset.js';
import type { GraphStage } from '../exec/graph/graphStage.js';
import type { GradientSync } from '../exec/gradientSync.js';
import type { Optimizer } from '../exec/optimizer.js';
import type { StageExecutor } from '../exec/stageExecutor.js';
import type { TensorGroup } from '../exec/tensorParallel/tensorGroup.js';
import { planGroups } from '../comm/planGroups.js';
import { boundaryRanks } from '../schedule/stageBoundary.js';
import { scheduleTraits } from '../../engine/plan/scheduleTraits.js';
import type { EvalMeasures } from '../exec/stageExecutor.js';

/** Everything one agent needs to execute its part of a plan. */
export interface StageContext {
  plan: Plan;
  model: ModelGraph;
  me: Placement;
  /** What the synchronous schedules drive: the whole stage, or this agent's tensor-parallel shard. */
  module: StageExecutor;
  /** Hand gradients to their all-reduce during the step's last backward pass (not only after it). */
  overlapGradients: boolean;
  /** The stage replica's tensor-parallel group, when the stage is sharded. */
  tensorGroup: TensorGroup | null;
  /** The synchronous schedules' gradient summation and update (data parallel, ZeRO, clipping). */
  gradientSync: GradientSync | null;
  /** The asynchronous schedule's optimizer, applied after every micro-batch. */
  optimizer: Optimizer | null;
  mesh: PeerMesh;
  data: Dataset;
  /** What an evaluation measures on the last stage: each output's loss and the metrics to report. */
  measures: EvalMeasures;
  /** The dataset arrays the first stage reads (the model's inputs) and the last stage's targets (one per output). */
  feeds: { inputs: string[]; targets: string[] };
  /** The whole stage in this process (not tensor-parallel): batch-norm statistics, state weights, the asynchronous schedule. */
  graphStage: GraphStage | null;
  /** This stage's data-parallel group (same shard), for the collectives beside the gradients'. */
  dataGroup: ProcessGroup;
  /** Rank of the previous / next stage's agent serving the same replica (shard 0); null at the ends. */
  prevRank: number | null;
  nextRank: number | null;
  /** Ranks of this stage's data-parallel group (same shard), in ring order. */
  dataParallelGroup: number[];
  /** How many times slower than it is this agent behaves (heterogeneity benchmarks); 1 normally. */
  slowdown: number;
}

export interface Neighbours {
  prevRank: number | null;
  nextRank: number | null;
  dataParallelGroup: number[];
  /** Ranks of this stage replica's tensor-parallel group, in shard order. */
  tensorGroup: number[];
  /** Every rank this agent exchanges tensors with. */
  links: number[];
  /** Every rank of the job, for the global gradient norm (only when the plan clips gradients). */
  everyone: number[];
}

/** The ranks an agent exchanges tensors with: pipeline neighbours and its data- and tensor-parallel groups. */
export function neighbours(plan: Plan, me: Placement): Neighbours {
  const last = plan.stages.length - 1;
  const all = placements(plan);
  const { data: dataParallelGroup, tensor: tensorGroup } = planGroups(plan, me.rank);
  const everyone = plan.gradientClipNorm !== undefined && scheduleTraits(plan.schedule).stepBarrier ? all.map((p) => p.rank) : [];
  const links = [...new Set([...boundaryRanks(plan, me), ...dataParallelGroup, ...tensorGroup, ...everyone])].filter((r) => r !== me.rank);
  return {
    prevRank: me.stage > 0 ? rankOf(plan, me.stage - 1, me.replica) : null,
    nextRank: me.stage < last ? rankOf(plan, me.stage + 1, me.replica) : null,
    dataParallelGroup,
    tensorGroup,
    links,
    everyone,
  };
}
