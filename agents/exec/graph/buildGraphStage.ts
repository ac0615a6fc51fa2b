import type { ModelGraph } from '../../../engine/model/graph.js';
import { stageCuts } from '../../../engine/model/stageCuts.js';
import type { OutputLoss } from '../../../engine/model/trainingSpec.js';
import type { Plan } from '../../../engine/plan/plan.js';
import { GraphStage } from './graphStage.js';
import { layersModelOf } from './modelOfGraph.js';

/** This agent's stage of any model: the model's layers built by tfjs-layers (layersModelOf), the stage's calls as a GraphStage. */
export async function buildGraphStage(graph: ModelGraph, plan: Plan, stage: number, losses: OutputLoss[], keepActivations = !plan.recompute): Promise<GraphStage> {
  const model = await layersModelOf(graph, plan.seed);
  const stages = plan.stages.map((s) => s.layers);
  return new GraphStage({ graph, model, layers: stages[stage], cuts: stageCuts(graph, stages), stage, losses, seed: plan.seed, keepActivations });
}
