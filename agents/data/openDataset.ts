import type { ModelGraph } from '../../engine/model/graph.js';
import type { OutputLoss } from '../../engine/model/trainingSpec.js';
import type { DataRef } from '../../engine/protocol/trainingSetup.js';
import type { ArraySpec, Dataset } from './dataset.js';
import { mnistDataset } from './mnistDataset.js';
import { openNpyFolder } from './npyFolder.js';
import { syntheticDataset } from './syntheticData.js';

/** The arrays a model reads and the targets its losses compare against, with the ranges labels must have. */
export interface ModelArrays {
  inputs: Array<ArraySpec & { range?: [number, number] }>;
  targets: Array<ArraySpec & { range?: [number, number] }>;
}

/** The per-sample shape of an output's targets: class indices for sparse losses, else the output's. */
export function targetShape(loss: OutputLoss, outputShape: number[]): number[] {
  return loss.loss === 'sparseCategoricalCrossentropy' ? outputShape.slice(0, -1) : outputShape;
}

export function modelArrays(graph: ModelGraph, losses: OutputLoss[]): ModelArrays {
  const byId = new Map(graph.layers.map((l) => [l.id, l]));
  const inputs = graph.layers
    .filter((l) => l.spec.kind === 'input')
    .map((l) => {
      // An input read by an Embedding holds token ids: integers below the vocabulary size.
      const embedding = graph.layers.find((c) => c.inputs.includes(l.id) && c.spec.kind === 'embedding');
      const vocabulary = embedding?.spec.kind === 'embedding' ? embedding.spec.inputDim : undefined;
      return { name: l.id, shape: l.outputShape, dtype: vocabulary ? 'int32' : 'float32', ...(vocabulary ? { range: [0, vocabulary - 1] as [number, number] } : {}) };
    });
  const targets = losses.map((loss) => {
    const shape = byId.get(loss.output)!.outputShape;
    const classes = shape[shape.length - 1];
    const range: [number, number] | undefined =
      loss.loss === 'sparseCategoricalCrossentropy' ? [0, classes - 1] : loss.loss === 'binaryCrossentropy' || loss.loss === 'categoricalCrossentropy' ? [0, 1] : undefined;
    return { name: loss.output, shape: targetShape(loss, shape), dtype: loss.loss === 'sparseCategoricalCrossentropy' ? 'int32' : 'float32', ...(range ? { range } : {}) };
  });
  return { inputs, targets };
}

/**
 * Open what a job trains on, checked against the model: every array present with the right shape, and
 * (for a NumPy folder) labels inside the range the loss accepts — before any agent computes anything.
 */
export function openDataset(ref: DataRef, graph: ModelGraph, losses: OutputLoss[], seed: number): Dataset {
  const arrays = modelArrays(graph, losses);
  if (ref.kind === 'mnist') {
    if (arrays.inputs.length !== 1 || arrays.targets.length !== 1) throw new Error(`The MNIST digits feed one input and one output; model "${graph.name}" has ${arrays.inputs.length} and ${arrays.targets.length}. Pass --data DIR with one .npy file per input and output.`);
    return mnistDataset(arrays.inputs[0].name, arrays.targets[0].name);
  }
  if (ref.kind === 'synthetic') return syntheticDataset(arrays, { samples: ref.samples, validation: ref.validation, seed });
  const dataset = openNpyFolder(ref.dir, arrays, { validationSplit: ref.validationSplit, seed });
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
