import type { ModelGraph } from './graph.js';

/**
 * Calls of one layer: graph ids `<layer>` and `<layer>@k` (and the same inside a nested model called
 * twice, `<call>@k/<inner>`) all run the one layer and share its weights. Those calls must sit in one
 * pipeline stage: two stages would hold two copies of the weights that learn apart.
 */
export function layerOfCall(id: string): string {
  return id
    .split('/')
    .map((part) => part.replace(/@\d+$/, ''))
    .join('/');
}

/** Every layer called more than once, with its calls' ids in graph order. */
export function sharedLayerCalls(graph: ModelGraph): Map<string, string[]> {
  const calls = new Map<string, string[]>();
  for (const layer of graph.layers) {
    const base = layerOfCall(layer.id);
    calls.set(base, [...(calls.get(base) ?? []), layer.id]);
  }
  return new Map([...calls].filter(([, ids]) => ids.length > 1));
}

/**
 * Whether a stage boundary before layer `c` (between layers c − 1 and c of the graph's order) would
 * separate two calls of a shared layer.
 */
export function cutSplitsSharedLayer(graph: ModelGraph): (c: number) => boolean {
  const index = new Map(graph.layers.map((l, i) => [l.id, i]));
  const spans = [...sharedLayerCalls(graph).values()].map((ids) => [index.get(ids[0])!, index.get(ids[ids.length - 1])!]);
  return (c) => spans.some(([first, last]) => first < c && c <= last);
}
