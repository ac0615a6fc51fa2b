import type { ModelGraph } from '../../../engine/model/graph.js';
import { kerasTopology } from '../../../engine/model/export/kerasTopology.js';
import { stageCuts } from '../../../engine/model/stageCuts.js';
import type { OutputLoss } from '../../../engine/model/trainingSpec.js';
import type { Plan } from '../../../engine/plan/plan.js';
import { hostPath } from '../../../engine/wire/hostPath.js';
import { readLayersModel, type LayersModelRead } from '../../../engine/wire/layersModelFile.js';
import { GraphStage } from './graphStage.js';
import { assignWeights, buildLayersModel } from './layersModel.js';
import type * as tfl from '@tensorflow/tfjs-layers/dist/index.js';

/**
 * The model as tfjs-layers builds it, with its starting weights: a user's model from its file (its
 * weights when the file has them), a built-in one from the Keras topology `shoal export` writes for
 * it. Every process builds the same model from the same seed.
 */
export async function buildModel(graph: ModelGraph, seed: number): Promise<tfl.LayersModel> {
  const file: Pick<LayersModelRead, 'topology' | 'weights'> = graph.source
    ? readLayersModel(hostPath(graph.source.modelFile))
    : { topology: kerasTopology(graph, 'shoal').topology, weights: null };
  const model = await buildLayersModel(file.topology, seed);
  if (file.weights) {
    const missing = assignWeights(model, new Map([...file.weights].map(([name, w]) => [name, w.values])));
    if (missing.length > 0) {
      const some = `${missing.slice(0, 5).join(', ')}${missing.length > 5 ? ', …' : ''}`;
      throw new Error(`The weights of ${graph.source!.modelFile} lack ${missing.length} of the model's weights (${some}). Save the model and its weights together with model.save().`);
    }
  }
  return model;
}

/** This agent's stage of any model: the model's layers built by tfjs-layers, the stage's calls as a GraphStage. */
export async function buildGraphStage(graph: ModelGraph, plan: Plan, stage: number, losses: OutputLoss[], keepActivations = !plan.recompute): Promise<GraphStage> {
  const model = await buildModel(graph, plan.seed);
  const stages = plan.stages.map((s) => s.layers);
  return new GraphStage({ graph, model, layers: stages[stage], cuts: stageCuts(graph, stages), stage, losses, seed: plan.seed, keepActivations });
}
