/**
 * ModelGraph: Shoal's intermediate representation of a model. Layers carry their output shape and the
 * cost facts the planner and the studio need; the agents build executable stages from the same graph.
 * Shapes exclude the batch dimension.
 */

export type Activation = 'linear' | 'relu' | 'softmax';

export type LayerSpec =
  | { kind: 'input'; shape: number[] }
  | { kind: 'dense'; units: number; activation: Activation }
  | {
      kind: 'conv2d';
      filters: number;
      kernelSize: [number, number];
      strides: [number, number];
      padding: 'same' | 'valid';
      activation: Activation;
    }
  | { kind: 'maxPool2d'; poolSize: [number, number]; strides: [number, number] }
  | { kind: 'flatten' }
  | { kind: 'reshape'; targetShape: number[] };

export type LayerKind = LayerSpec['kind'];

export interface LayerNode {
  /** Stable identifier, unique in the graph; plans refer to layers by it. */
  id: string;
  spec: LayerSpec;
  /** Ids of the layers whose outputs feed this one (empty for inputs). */
  inputs: string[];
  /** Optional group name (e.g. a residual block) used by the studio to collapse layers. */
  group?: string;
  outputShape: number[];
  params: number;
  /** Multiply-adds count twice: FLOPs for one sample. */
  forwardFlops: number;
  backwardFlops: number;
  /** Bytes of this layer's output activation for one sample (float32). */
  activationBytes: number;
}

export interface ModelGraph {
  name: string;
  description: string;
  /** Layers in a topological order; the first is the input. */
  layers: LayerNode[];
  /** The task the graph is trained on: softmax cross-entropy over this many classes. */
  numClasses: number;
}

export function totalParams(graph: ModelGraph): number {
  return graph.layers.reduce((sum, layer) => sum + layer.params, 0);
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
