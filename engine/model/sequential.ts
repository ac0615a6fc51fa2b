import { GraphBuilder } from './builder.js';
import type { ModelGraph } from './graph.js';
import type { LayerSpec } from './layerSpec.js';

export interface SequentialLayer {
  id: string;
  spec: LayerSpec;
  group?: string;
}

/** Build a ModelGraph from a chain of layers ending in class logits, inferring shapes and costs. */
export function sequentialGraph(
  name: string,
  description: string,
  inputShape: number[],
  layers: SequentialLayer[],
  numClasses: number,
): ModelGraph {
  const builder = new GraphBuilder(name);
  let previous = builder.add('input', { kind: 'input', shape: inputShape });
  for (const layer of layers) previous = builder.add(layer.id, layer.spec, [previous], layer.group);
  const last = builder.shapeOf(previous);
  if (last.length !== 1 || last[0] !== numClasses) {
    throw new Error(`Model "${name}" ends in shape [${last}], expected [${numClasses}] class logits.`);
  }
  return builder.build(description, [previous], numClasses);
}
