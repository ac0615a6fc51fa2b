import type { LayerNode, ModelGraph } from '../../../engine/model/graph';

/**
 * The graph as drawn: either every layer, or, for big models, each named group of layers (a residual
 * block, a transformer block) folded into one node. A group that a stage boundary cuts is folded per
 * stage, so every drawn node still belongs to exactly one pipeline stage.
 */
export type ViewNode =
  | { id: string; kind: 'layer'; layer: LayerNode; inputs: string[] }
  | { id: string; kind: 'block'; group: string; layers: LayerNode[]; inputs: string[] };

export interface ViewGraph {
  nodes: ViewNode[];
  /** View node id → pipeline stage. */
  stageOf: Map<string, number>;
}

/** Models with more layers than this open with their blocks folded. */
export const COLLAPSE_ABOVE = 40;

/** A big model without groups (a long Sequential import) folds into runs of this many consecutive layers. */
export const CHUNK_ABOVE = 200;
export const CHUNK = 20;

/**
 * The group each layer folds into: the model's own groups, or for a big ungrouped model runs of CHUNK
 * layers in graph order ("layers 1–20"), so that a 1,000-layer model opens as ~50 blocks.
 */
export function groupsOf(model: ModelGraph): Array<string | undefined> {
  const n = model.layers.length;
  if (model.layers.some((l) => l.group !== undefined) || n <= CHUNK_ABOVE) return model.layers.map((l) => l.group);
  return model.layers.map((_, i) => {
    const first = i - (i % CHUNK);
    return `layers ${first + 1}–${Math.min(first + CHUNK, n)}`;
  });
}

export function canCollapse(model: ModelGraph): boolean {
  return model.layers.length > CHUNK_ABOVE || model.layers.some((l) => l.group !== undefined);
}

/** `open`: groups unfolded one by one (a search match inside, a double click), drawn layer by layer. */
export function viewGraph(model: ModelGraph, stageOf: Map<string, number>, collapse: boolean, open: ReadonlySet<string> = new Set()): ViewGraph {
  const viewIdOf = new Map<string, string>();
  const blocks = new Map<string, Extract<ViewNode, { kind: 'block' }>>();
  const nodes: ViewNode[] = [];
  const viewStage = new Map<string, number>();
  const groups = collapse ? groupsOf(model) : [];
  for (const [i, layer] of model.layers.entries()) {
    const stage = stageOf.get(layer.id);
    const group = groups[i];
    if (!collapse || group === undefined || open.has(group)) {
      viewIdOf.set(layer.id, layer.id);
      nodes.push({ id: layer.id, kind: 'layer', layer, inputs: [] });
      if (stage !== undefined) viewStage.set(layer.id, stage);
      continue;
    }
    const id = `block:${group}@${stage ?? '-'}`;
    viewIdOf.set(layer.id, id);
    let block = blocks.get(id);
    if (!block) {
      block = { id, kind: 'block', group, layers: [], inputs: [] };
      blocks.set(id, block);
      nodes.push(block);
      if (stage !== undefined) viewStage.set(id, stage);
    }
    block.layers.push(layer);
  }
  const byId = new Map(nodes.map((n) => [n.id, n]));
  for (const layer of model.layers) {
    const to = viewIdOf.get(layer.id)!;
    const node = byId.get(to)!;
    for (const input of layer.inputs) {
      const from = viewIdOf.get(input);
      if (from && from !== to && !node.inputs.includes(from)) node.inputs.push(from);
    }
  }
  return { nodes, stageOf: viewStage };
}
