import type * as tfl from '@tensorflow/tfjs-layers/dist/index.js';
import { kerasTopology } from '../../../engine/model/export/kerasTopology.js';
import type { ModelGraph } from '../../../engine/model/graph.js';
import { hostPath } from '../../../engine/wire/hostPath.js';
import { readLayersModel } from '../../../engine/wire/layersModelFile.js';
import { assignWeights, buildLayersModel } from './layersModel.js';

/**
 * The model's layers as tfjs-layers builds them (every process builds the same model from the same
 * seed): a user's model from its file, its weights loaded when the file has them; a built-in model
 * from the Keras topology Shoal exports it as.
 */
export async function layersModelOf(graph: ModelGraph, seed: number): Promise<tfl.LayersModel> {
  if (!graph.source) return buildLayersModel(kerasTopology(graph, 'shoal').topology, seed);
  const file = readLayersModel(hostPath(graph.source.modelFile));
  const model = await buildLayersModel(file.topology, seed);
  if (file.weights) {
    const missing = assignWeights(model, file.weights);
    if (missing.length > 0) {
      throw new Error(`The weights of ${graph.source.modelFile} lack ${missing.length} of the model's weights (${missing.slice(0, 5).join(', ')}${missing.length > 5 ? ', …' : ''}). Save the model and its weights together with model.save().`);
    }
  }
  return model;
}
