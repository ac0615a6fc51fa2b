import type { ModelGraph } from '../model/graph.js';
import type { OutputLoss } from '../model/trainingSpec.js';

/** One array a model reads or is compared against, per sample, with the range integer values must have. */
export interface ModelArray {
  name: string;
  /** Per sample, without the batch dimension. */
  shape: number[];
  dtype: string;
  /** Inclusive bounds of integer values (token ids, class labels); absent: any value. */
  range?: [number, number];
}

/** The arrays a model reads (its input layers) and the targets its losses compare against (one per output). */
export interface ModelArrays {
  inputs: ModelArray[];
  targets: ModelArray[];
}

/** The per-sample shape of an output's targets: class indices for sparse losses, else the output's. */
export function targetShape(loss: OutputLoss, outputShape: number[]): number[] {
  return loss.loss === 'sparseCategoricalCrossentropy' ? outputShape.slice(0, -1) : outputShape;
}

export function modelArrays(graph: ModelGraph, losses: OutputLoss[]): ModelArrays {
  const byId = new Map(graph.layers.map((l) => [l.id, l]));
  const inputs = graph.layers
    .filter((l) => l.spec.kind === 'input')
    .map((l): ModelArray => {
      // An input read by an Embedding holds token ids: integers below the vocabulary size.
      const embedding = graph.layers.find((c) => c.inputs.includes(l.id) && c.spec.kind === 'embedding');
      const vocabulary = embedding?.spec.kind === 'embedding' ? embedding.spec.inputDim : undefined;
      return { name: l.id, shape: l.outputShape, dtype: vocabulary ? 'int32' : 'float32', ...(vocabulary ? { range: [0, vocabulary - 1] as [number, number] } : {}) };
    });
  const targets = losses.map((loss): ModelArray => {
    const shape = byId.get(loss.output)!.outputShape;
    const classes = shape[shape.length - 1];
    const range: [number, number] | undefined =
      loss.loss === 'sparseCategoricalCrossentropy' ? [0, classes - 1] : loss.loss === 'binaryCrossentropy' || loss.loss === 'categoricalCrossentropy' ? [0, 1] : undefined;
    return { name: loss.output, shape: targetShape(loss, shape), dtype: loss.loss === 'sparseCategoricalCrossentropy' ? 'int32' : 'float32', ...(range ? { range } : {}) };
  });
  return { inputs, targets };
}

/** Why the bundled digits cannot feed this model, or null when they can (one input, one output). */
export function mnistMismatch(graph: ModelGraph, arrays: ModelArrays): string | null {
  if (arrays.inputs.length === 1 && arrays.targets.length === 1) return null;
  return `The MNIST digits feed one input and one output; model "${graph.name}" has ${arrays.inputs.length} and ${arrays.targets.length}. Pass --data DIR with one .npy file per input and output.`;
}
