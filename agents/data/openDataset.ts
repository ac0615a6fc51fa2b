import { mnistMismatch, modelArrays } from '../../engine/data/modelArrays.js';
import type { ModelGraph } from '../../engine/model/graph.js';
import type { OutputLoss } from '../../engine/model/trainingSpec.js';
import type { DataRef } from '../../engine/protocol/trainingSetup.js';
import type { Dataset } from '../../engine/wire/data/dataset.js';
import { openUserData } from '../../engine/wire/data/openUserData.js';
import { mnistDataset } from './mnistDataset.js';
import { rememberSource } from './stepRows.js';

/** What a job trains on: the bundled digits (which only agents carry), or the user's data. */
export async function openDataset(ref: DataRef, graph: ModelGraph, losses: OutputLoss[], seed: number): Promise<Dataset> {
  const arrays = modelArrays(graph, losses);
  if (ref.kind !== 'mnist') {
    const dataset = openUserData(ref, arrays, seed);
    rememberSource(dataset, { ref, arrays, seed });
    return dataset;
  }
  const mismatch = mnistMismatch(graph, arrays);
  if (mismatch) throw new Error(mismatch);
  return mnistDataset(arrays.inputs[0].name, arrays.targets[0].name);
}
