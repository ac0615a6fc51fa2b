import type { LayerNode, ModelGraph } from '../../../engine/model/graph.js';

/** Resolve a stage's layer ids against the model: the layers, the stage's input shape and its position. */
export function stageLayers(graph: ModelGraph, layerIds: string[]): { layers: LayerNode[]; inputShape: number[]; isFirst: boolean; isLast: boolean } {
  const index = new Map(graph.layers.map((l, i) => [l.id, i]));
  const positions = layerIds.map((id) => {
    const i = index.get(id);
    if (i === undefined) throw new Error(`Stage layer "${id}" is not in model "${graph.name}".`);
    return i;
  });
  const first = Math.min(...positions);
  const last = Math.max(...positions);
  const layers = graph.layers.slice(first, last + 1);
  if (layers.length !== layerIds.length) {
    throw new Error(`Stage layers [${layerIds.join(', ')}] are not a contiguous run of "${graph.name}".`);
  }
  const inputShape = first === 0 ? (layers[0].spec.kind === 'input' ? layers[0].outputShape : []) : graph.layers[first - 1].outputShape;
  return { layers, inputShape, isFirst: first === 0, isLast: last === graph.layers.length - 1 };
}
