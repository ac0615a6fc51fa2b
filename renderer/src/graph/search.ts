import type { ViewNode } from './collapse';

/**
 * Finding layers on the graph by id or kind. A match inside a folded block is found through the block
 * that draws it, so focusing a match always lands on something drawn.
 */
export interface SearchHit {
  /** The matching layer. */
  layerId: string;
  /** The drawn node that shows it: the layer itself, or the folded block that holds it. */
  viewId: string;
}

/**
 * Layers whose id or kind contains the query (case-insensitive; several words must all match), in graph
 * order; layers whose id is exactly the query come first.
 */
export function searchLayers(view: readonly ViewNode[], query: string): SearchHit[] {
  const words = query.trim().toLowerCase().split(/\s+/).filter(Boolean);
  if (words.length === 0) return [];
  const exact: SearchHit[] = [];
  const rest: SearchHit[] = [];
  for (const node of view) {
    const layers = node.kind === 'layer' ? [node.layer] : node.layers;
    for (const layer of layers) {
      const id = layer.id.toLowerCase();
      const text = `${id} ${layer.spec.kind.toLowerCase()}${node.kind === 'block' ? ` ${node.group.toLowerCase()}` : ''}`;
      if (!words.every((w) => text.includes(w))) continue;
      (id === query.trim().toLowerCase() ? exact : rest).push({ layerId: layer.id, viewId: node.id });
    }
  }
  return [...exact, ...rest];
}

/** The next match after `current` (or before, with step -1), wrapping around; -1 when there is none. */
export function stepHit(current: number, count: number, step: 1 | -1): number {
  if (count === 0) return -1;
  if (current < 0) return step === 1 ? 0 : count - 1;
  return (((current + step) % count) + count) % count;
}
