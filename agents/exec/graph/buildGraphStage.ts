import type { ModelGraph } from '../../../engine/model/graph.js';
import { stageCuts } from '../../../engine/model/stageCuts.js';
import type { OutputLoss } from '../../../engine/model/trainingSpec.js';
import type { Plan } from '../../../engine/plan/plan.js';
import { hostPath } from '../../../engine/wire/hostPath.js';
import { readLayersModel } from '../../../engine/wire/layersModelFile.js';
import { GraphStage } from './graphStage.js';
import { assignWeights, buildLayersModel } from './layersModel.js';

/**
 * This agent's stage of a user's model: the model file's layers built by tfjs-layers (every process
 * builds the same model from the same seed), its weights loaded when the file has them, then the
 * stage's layer calls wrapped as a GraphStage.
 */
export async function buildGraphStage(graph: ModelGraph, plan: Plan, stage: number, losses: OutputLoss[]): Promise<GraphStage> {
  const file = readLayersModel(hostPath(graph.source!.modelFile));
  const model = await buildLayersModel(file.topology, plan.seed);
  if (file.weights) {
    const missing = assignWeights(model, new Map([...file.weights].map(([name, w]) => [name, w.values])));
    if (missing.length > 0) {
      throw new Error(`The weights of ${graph.source!.modelFile} lack ${missing.length} of the model's weights (${missing.slice(0, 5).join(', ')}${missing.length > 5 ? ', …' : ''}). Save the model and its weights together with model.save().`);
    }
  }
  const stages = plan.stages.map((s) => s.layers);
  return new GraphStage({ graph, model, layers: stages[stage], cuts: stageCuts(graph, stages), stage, losses, seed: plan.seed });
}
