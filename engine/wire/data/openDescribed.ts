import { isAbsolute } from 'node:path';
import type { DatasetDescription } from '../../data/datasetDescription.js';
import type { ModelArrays } from '../../data/modelArrays.js';
import { hostPath } from '../hostPath.js';
import { openCsvTable } from './csvTable.js';
import type { Dataset } from './dataset.js';
import { openImageFolder } from './imageFolder.js';
import { openJsonLines } from './jsonLines.js';
import { openNpz } from './npz.js';
import { checkedNpyFolder } from './checkedNpyFolder.js';

/**
 * A described dataset opened by its format's reader and checked against the model: shapes, dtypes,
 * label ranges and class counts, with the file, row and column of the first problem.
 */
export function openDescribedDataset(description: DatasetDescription, arrays: ModelArrays, seed: number): Dataset {
  const source = hostPath(description.source);
  if (!isAbsolute(source)) throw new Error(`Dataset source "${description.source}" is not a full path; a job's processes need absolute paths (the CLI resolves relative ones).`);
  switch (description.format) {
    case 'csv':
    case 'tsv':
      return openCsvTable(source, description, arrays, seed);
    case 'images':
      return openImageFolder(source, description, arrays, seed);
    case 'jsonl':
      return openJsonLines(source, description, arrays, seed);
    case 'npz':
      return openNpz(source, description, arrays, seed);
    case 'npy':
      return checkedNpyFolder(source, arrays, description.validationSplit, seed, description.validationHoldOut);
  }
}
