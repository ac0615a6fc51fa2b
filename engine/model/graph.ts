/**
 * ModelGraph: Shoal's intermediate representation of a model. Layers carry their output shape and the
 * cost facts the planner and the studio need; the agents build executable stages from the same graph.
 * Shapes exclude the batch dimension.
 */
import type { KeptElements } from './facts/kept.js';
import type { LayerSpec } from './layerSpec.js';

export type { Activation, LayerKind, LayerSpec, Padding, RecurrentSpec } from './layerSpec.js';

export interface LayerNode {
  /** Stable identifier, unique in the graph; plans refer to layers by it. */
  id: string;
  spec: LayerSpec;
  /** Ids of the layers whose outputs feed this one, in argument order (empty for inputs). */
  inputs: string[];
  /** Optional group name (e.g. a residual block) used by the studio to collapse layers. */
  group?: string;
  outputShape: number[];
  /** Trainable parameters: each has a gradient and optimizer state. */
  params: number;
  /** Parameters without gradients (batch-norm moving statistics, frozen layers): memory only. */
  nonTrainableParams: number;
  /** Multiply-adds count twice: FLOPs for one sample. */
  forwardFlops: number;
  backwardFlops: number;
  /** Bytes of this layer's output activation for one sample (float32). */
  activationBytes: number;
  /** Elements of one sample this layer keeps for its backward pass (engine/model/facts/kept.ts). */
  kept: KeptElements;
}

export interface ModelGraph {
  name: string;
  description: string;
  /** Layers in a topological order; inputs have kind 'input'. */
  layers: LayerNode[];
  /** Ids of the layers whose outputs are the model's outputs. */
  outputs: string[];
  /**
   * Softmax cross-entropy over this many classes, for models the agents train on the bundled MNIST.
   * Absent for imported and zoo models that are only planned and priced.
   */
  numClasses?: number;
  /**
   * The model file this graph was imported from (a tfjs LayersModel's model.json, absolute path): the
   * agents build its layers with tfjs-layers and start from its weights, and exports keep its topology.
   * Absent for the zoo's built-in models.
   */
  source?: {
    modelFile: string;
    /** The user's `--layers` module (exports `register(tf)`), run by every process before it builds the model. */
    layersFile?: string;
  };
}

export function totalParams(graph: ModelGraph): number {
  return graph.layers.reduce((sum, layer) => sum + layer.params, 0);
}

/** Trainable and non-trainable parameters together: what Keras's and tfjs's `countParams()` report. */
export function totalWeights(graph: ModelGraph): number {
  return graph.layers.reduce((sum, layer) => sum + layer.params + layer.nonTrainableParams, 0);
}

export function layerById(graph: ModelGraph, id: string): LayerNode {
  const layer = graph.layers.find((l) => l.id === id);
  if (!layer) throw new Error(`Layer "${id}" is not in model "${graph.name}".`);
  return layer;
}

/** Layers that carry trainable parameters, in graph order. */
export function trainableLayers(graph: ModelGraph): LayerNode[] {
  return graph.layers.filter((l) => l.params > 0);
}
