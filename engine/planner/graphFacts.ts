import type { LayerNode, ModelGraph } from '../model/graph.js';
import { totalParams } from '../model/graph.js';
import { cutSplitsSharedLayer } from '../model/sharedLayers.js';

/**
 * Facts about a model's graph that decide where the planner may cut stages and which layers it may
 * shard, computed once per search.
 */
export interface GraphFacts {
  layers: LayerNode[];
  /**
   * Positions c (1..n−1) where a stage boundary between layer c−1 and c passes exactly one tensor:
   * cutting inside a residual block would ship two activations per micro-batch instead of one. Never
   * between two calls of a shared layer (its weights live in one stage).
   */
  cuts: number[];
  /** Per-sample FLOPs (forward + backward) of each layer, for balancing stages. */
  work: number[];
  /** Index of a dense output layer that holds most of the weights (Whale's 100k-class case), or -1. */
  wideOutput: number;
  /** Megatron pairs inside transformer blocks: a dense layer whose only consumer is another dense layer. */
  denseChains: Array<[number, number]>;
  totalParams: number;
}

/** A dense output layer counts as wide when it holds at least this share of the parameters. */
const WIDE_SHARE = 0.3;

const isDense = (l: LayerNode) => (l.spec.kind === 'dense' || l.spec.kind === 'denseNd') && l.params > 0;

export function graphFacts(model: ModelGraph): GraphFacts {
  const layers = model.layers;
  const n = layers.length;
  const index = new Map(layers.map((l, i) => [l.id, i]));
  const consumers: number[][] = layers.map(() => []);
  layers.forEach((l, j) => l.inputs.forEach((id) => consumers[index.get(id) ?? 0].push(j)));
  // crossing[c]: tensors produced before c and consumed at or after c (a difference array sweep).
  const delta = new Array<number>(n + 2).fill(0);
  consumers.forEach((list, i) => {
    const last = Math.max(i, ...list);
    if (last > i) {
      delta[i + 1] += 1;
      delta[last + 1] -= 1;
    }
  });
  const cuts: number[] = [];
  const splitsShared = cutSplitsSharedLayer(model);
  let live = 0;
  for (let c = 1; c < n; c++) {
    live += delta[c];
    if (live === 1 && !splitsShared(c)) cuts.push(c);
  }
  const total = totalParams(model);
  let wideOutput = -1;
  layers.forEach((l, i) => {
    if (isDense(l) && model.outputs.includes(l.id) && l.params >= WIDE_SHARE * total) wideOutput = i;
  });
  const denseChains: Array<[number, number]> = [];
  layers.forEach((l, i) => {
    const next = consumers[i];
    if (!isDense(l) || next.length !== 1) return;
    const j = next[0];
    if (isDense(layers[j]) && layers[j].inputs.length === 1) denseChains.push([i, j]);
  });
  return { layers, cuts, work: layers.map((l) => l.forwardFlops + l.backwardFlops), wideOutput, denseChains, totalParams: total };
}

