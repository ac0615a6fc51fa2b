import type { ModelGraph } from '../../../engine/model/graph.js';
import { stageCuts } from '../../../engine/model/stageCuts.js';
import type { OutputLoss } from '../../../engine/model/trainingSpec.js';
import type { Plan } from '../../../engine/plan/plan.js';
import { layersModelOf } from '../graph/modelOfGraph.js';
import { ShardedGraphStage } from './shardedGraphStage.js';
import type { TensorGroup } from './tensorGroup.js';

/** This agent's tensor-parallel shard of a stage of any model (a user's or a built-in one). */
export async function buildShardedGraphStage(graph: ModelGraph, plan: Plan, stage: number, losses: OutputLoss[], group: TensorGroup): Promise<ShardedGraphStage> {
  const model = await layersModelOf(graph, plan.seed);
  const stages = plan.stages.map((s) => s.layers);
  return new ShardedGraphStage({ graph, model, layers: stages[stage], cuts: stageCuts(graph, stages), stage, plan, group, losses });
}
