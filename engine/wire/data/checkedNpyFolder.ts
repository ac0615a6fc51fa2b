import type { ValidationHoldOut } from '../../data/datasetDescription.js';
import type { ModelArrays } from '../../data/modelArrays.js';
import type { Dataset } from './dataset.js';
import { openNpyFolder } from './npyFolder.js';

/** A NumPy folder with its integer arrays' ranges checked against the model. */
export function checkedNpyFolder(dir: string, arrays: ModelArrays, validationSplit: number | undefined, seed: number, validationHoldOut?: ValidationHoldOut): Dataset {
  const dataset = openNpyFolder(dir, arrays, { validationSplit, validationHoldOut, seed });
  for (const spec of [...arrays.inputs, ...arrays.targets]) {
    if (!spec.range) continue;
    const { min, max, firstNonInteger: odd } = dataset.labelRange(spec.name);
    if (odd) {
      dataset.close();
      const what = arrays.inputs.includes(spec) ? `input "${spec.name}" takes integer ids` : `output "${spec.name}" takes class ids`;
      throw new Error(`NumPy folder ${dir}: ${odd.path} sample ${odd.row}: ${odd.value} is not a whole number, but model ${what} (${spec.range[0]}..${spec.range[1]}). Save whole class ids (np.save(path, y.astype(np.int64))), or use a regression loss (--loss mse).`);
    }
    if (!(min >= spec.range[0] && max <= spec.range[1])) {
      dataset.close();
      const what = arrays.inputs.includes(spec) ? 'token ids of input' : 'targets of output';
      throw new Error(`NumPy folder ${dir}: the ${what} "${spec.name}" range over [${min}, ${max}], but the model accepts [${spec.range[0]}, ${spec.range[1]}]. Check the labels (one-hot vs class ids, the number of classes) or the --loss.`);
    }
  }
  return dataset;
}
