import type { LayerNode, ModelGraph } from './graph.js';
import { layerFacts } from './layerFacts.js';
import type { LayerSpec } from './layerSpec.js';
import { product } from './facts/common.js';
import { keptForBackward } from './facts/kept.js';

/**
 * Builds a ModelGraph one layer at a time, each added after its inputs, so shapes and costs are inferred
 * in a single pass (linear in the number of layers: the zoo's largest model builds in milliseconds).
 */
export class GraphBuilder {
  private readonly nodes: LayerNode[] = [];
  private readonly byId = new Map<string, LayerNode>();

  constructor(readonly name: string) {}

  /** Adds a layer and returns its id, so calls nest like Keras's functional API. */
  add(id: string, spec: LayerSpec, inputs: string[] = [], group?: string): string {
    if (this.byId.has(id)) throw new Error(`Model "${this.name}": layer id "${id}" is used twice.`);
    const inputShapes = inputs.map((input) => {
      const node = this.byId.get(input);
      if (!node) throw new Error(`Model "${this.name}", layer "${id}": its input "${input}" is not defined before it.`);
      return node.outputShape;
    });
    let facts;
    try {
      facts = layerFacts(spec, inputShapes);
    } catch (err) {
      throw new Error(`Model "${this.name}", layer "${id}": ${(err as Error).message}`);
    }
    const kept = keptForBackward(spec, inputShapes, facts.outputShape, inputs);
    const activationBytes = 4 * product(facts.outputShape);
    const node: LayerNode = { id, spec, inputs: [...inputs], ...facts, activationBytes, kept };
    if (group !== undefined) node.group = group;
    this.nodes.push(node);
    this.byId.set(id, node);
    return id;
  }

  /** A layer added so far, for the importer to adjust (shared or frozen weights, a known output shape). */
  node(id: string): LayerNode {
    const node = this.byId.get(id);
    if (!node) throw new Error(`Model "${this.name}": no layer "${id}".`);
    return node;
  }

  has(id: string): boolean {
    return this.byId.has(id);
  }

  shapeOf(id: string): number[] {
    return this.node(id).outputShape;
  }

  build(description: string, outputs: string[], numClasses?: number): ModelGraph {
    for (const out of outputs) if (!this.byId.has(out)) throw new Error(`Model "${this.name}": output "${out}" is not a layer.`);
    const graph: ModelGraph = { name: this.name, description, layers: this.nodes, outputs: [...outputs] };
    if (numClasses !== undefined) graph.numClasses = numClasses;
    return graph;
  }
}
