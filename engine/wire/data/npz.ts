import type { DatasetDescription } from '../../data/datasetDescription.js';
import type { ModelArrays } from '../../data/modelArrays.js';
import type { Dataset } from './dataset.js';

export function openNpz(path: string, _description: DatasetDescription, _arrays: ModelArrays, _seed: number): Dataset {
  throw new Error(`${path}: not supported yet`);
}
