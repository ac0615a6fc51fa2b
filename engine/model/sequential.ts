import type { LayerNode, LayerSpec, ModelGraph } from './graph.js';
import { layerFacts } from './layerFacts.js';

export interface SequentialLayer {
  id: string;
  spec: LayerSpec;
  group?: string;
}

/** Build a ModelGraph from a chain of layers, inferring shapes and costs layer by layer. */
export function sequentialGraph(
  name: string,
  description: string,
  inputShape: number[],
  layers: SequentialLayer[],
  numClasses: number,
): ModelGraph {
  const nodes: LayerNode[] = [];
  const all: SequentialLayer[] = [{ id: 'input', spec: { kind: 'input', shape: inputShape } }, ...layers];
  const seen = new Set<string>();
  let previous: LayerNode | undefined;
  for (const layer of all) {
    if (seen.has(layer.id)) throw new Error(`Model "${name}": layer id "${layer.id}" is used twice.`);
    seen.add(layer.id);
    let facts;
    try {
      facts = layerFacts(layer.spec, previous ? previous.outputShape : inputShape);
    } catch (err) {
      throw new Error(`Model "${name}", layer "${layer.id}": ${(err as Error).message}`);
    }
    const node: LayerNode = {
      id: layer.id,
      spec: layer.spec,
      inputs: previous ? [previous.id] : [],
      group: layer.group,
      ...facts,
      activationBytes: 4 * facts.outputShape.reduce((a, b) => a * b, 1),
    };
    nodes.push(node);
    previous = node;
  }
  const last = nodes[nodes.length - 1];
  if (last.outputShape.length !== 1 || last.outputShape[0] !== numClasses) {
    throw new Error(`Model "${name}" ends in shape [${last.outputShape}], expected [${numClasses}] class logits.`);
  }
  return { name, description, layers: nodes, numClasses };
}
