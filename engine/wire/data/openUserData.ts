import type { ModelArrays } from '../../data/modelArrays.js';
import type { DataRef } from '../../protocol/trainingSetup.js';
import type { Dataset } from './dataset.js';
import { hostPath } from '../hostPath.js';
import { openDescribedDataset } from './openDescribed.js';
import { checkedNpyFolder } from './checkedNpyFolder.js';
import { syntheticDataset } from './syntheticData.js';

export type UserDataRef = Exclude<DataRef, { kind: 'mnist' }>;

/**
 * A user's data for a model — a NumPy folder, a described dataset (CSV/TSV, images, JSON Lines, .npz)
 * or synthetic data — checked against the model: every array present with the right shape and
 * integer values (labels, token ids) inside the range the model accepts. The studio and CLI call it
 * before any agent starts; the agents to train.
 */
export function openUserData(ref: UserDataRef, arrays: ModelArrays, seed: number): Dataset {
  if (ref.kind === 'synthetic') return syntheticDataset(arrays, { samples: ref.samples, validation: ref.validation, seed });
  if (ref.kind === 'dataset') return openDescribedDataset(ref.dataset, arrays, seed);
  return checkedNpyFolder(hostPath(ref.dir), arrays, ref.validationSplit, seed, ref.validationHoldOut);
}
