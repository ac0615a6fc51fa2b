import type { ModelGraph } from './graph.js';

/**
 * What crosses the cuts of a pipeline over any graph. Stages are contiguous runs of the graph's
 * topological order; the tensors between stage s and s + 1 are every layer output produced at or
 * before stage s and read at or after stage s + 1 — skip connections included — and the model's
 * outputs travel on to the last stage, where the losses are computed.
 *
 * Input layers have no computation and their data is read by the first stage, so an input layer counts
 * as produced by stage 0 wherever a plan puts it: data placed later simply crosses the cuts before it.
 * The same lists drive the agents (which pack the tensors of a cut into one row per sample) and the cost
 * model and the studio (bytes crossing a cut = the sum of the tensors crossing it).
 */
export interface StageCuts {
  /** Per stage: the tensors (producing layer ids) it receives; stage 0 receives the model's inputs. */
  incoming: string[][];
  /** Per stage: the tensors it sends on (the next stage's incoming); the last stage's model outputs. */
  outgoing: string[][];
}

export function stageCuts(graph: ModelGraph, stages: string[][]): StageCuts {
  const stageOf = new Map<string, number>();
  stages.forEach((ids, s) => ids.forEach((id) => stageOf.set(id, s)));
  const byId = new Map(graph.layers.map((l) => [l.id, l]));
  const last = stages.length - 1;
  const producer = (id: string): number => (byId.get(id)?.spec.kind === 'input' ? 0 : (stageOf.get(id) ?? 0));
  /** The latest stage that reads each tensor (the last stage for model outputs). */
  const lastReader = new Map<string, number>();
  const read = (id: string, s: number) => lastReader.set(id, Math.max(lastReader.get(id) ?? -1, s));
  for (const layer of graph.layers) {
    const s = stageOf.get(layer.id);
    if (s === undefined) continue;
    for (const input of layer.inputs) read(input, s);
  }
  for (const out of graph.outputs) read(out, last);
  const order = graph.layers.map((l) => l.id);
  const inputs = graph.layers.filter((l) => l.spec.kind === 'input').map((l) => l.id);
  const crossing = (s: number) => order.filter((id) => producer(id) <= s && (lastReader.get(id) ?? -1) > s);
  const outgoing = stages.map((_, s) => (s === last ? [...graph.outputs] : crossing(s)));
  const incoming = stages.map((_, s) => (s === 0 ? inputs : outgoing[s - 1]));
  return { incoming, outgoing };
}

/** Elements per sample of the tensors `ids` (their output shapes' sizes, summed): a packed row's width. */
export function packedWidth(graph: ModelGraph, ids: string[]): number {
  const byId = new Map(graph.layers.map((l) => [l.id, l]));
  return ids.reduce((n, id) => n + (byId.get(id)?.outputShape.reduce((a, b) => a * b, 1) ?? 0), 0);
}
