import type { ModelArrays } from '../../data/modelArrays.js';
import type { Dataset } from './dataset.js';
import { hostPath } from '../hostPath.js';
import { openNpyFolder } from './npyFolder.js';
import { syntheticDataset } from './syntheticData.js';

export type UserDataRef = { kind: 'synthetic'; samples: number; validation: number } | { kind: 'npy'; dir: string; validationSplit?: number };

/**
 * A user's data for a model — a NumPy folder or synthetic data — checked against the model: every
 * array present with the right shape and, for a folder, integer values (labels, token ids) inside the
 * range the model accepts. The studio and CLI call it before any agent starts; the agents to train.
 */
export function openUserData(ref: UserDataRef, arrays: ModelArrays, seed: number): Dataset {
  if (ref.kind === 'synthetic') return syntheticDataset(arrays, { samples: ref.samples, validation: ref.validation, seed });
  const dataset = openNpyFolder(hostPath(ref.dir), arrays, { validationSplit: ref.validationSplit, seed });
  for (const spec of [...arrays.inputs, ...arrays.targets]) {
    if (!spec.range) continue;
    const { min, max } = dataset.labelRange(spec.name);
    if (!(min >= spec.range[0] && max <= spec.range[1])) {
      dataset.close();
      const what = arrays.inputs.includes(spec) ? 'token ids of input' : 'targets of output';
      throw new Error(`NumPy folder ${ref.dir}: the ${what} "${spec.name}" range over [${min}, ${max}], but the model accepts [${spec.range[0]}, ${spec.range[1]}]. Check the labels (one-hot vs class ids, the number of classes) or the --loss.`);
    }
  }
  return dataset;
}
