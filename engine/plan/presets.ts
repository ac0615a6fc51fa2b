import type { ModelGraph } from '../model/graph.js';
import { cutSplitsSharedLayer, sharedLayerCalls } from '../model/sharedLayers.js';
import { LIMITS } from './limits.js';
import type { WeightSbp } from './sbp.js';
import { inputShapeOf, shardingProblem } from './tensorSharding.js';
import type { OptimizerConfig, Plan } from './plan.js';

export interface PresetOptions {
  globalBatch?: number;
  microBatches?: number;
  optimizer?: OptimizerConfig;
  seed?: number;
}

export const DEFAULT_GLOBAL_BATCH = 64;
export const DEFAULT_SEED = 42;
export const DEFAULT_OPTIMIZER: OptimizerConfig = { kind: 'adam', learningRate: 0.001, beta1: 0.9, beta2: 0.999, epsilon: 1e-7 };

/**
 * Split the layers into `count` contiguous stages with the most expensive stage as cheap as possible
 * (forward + backward FLOPs per sample), by dynamic programming over split points — never between two
 * calls of a shared layer.
 */
export function balancedStages(model: ModelGraph, count: number): string[][] {
  const layers = model.layers;
  if (count < 1 || count > layers.length) {
    throw new Error(`Cannot cut ${layers.length} layers of "${model.name}" into ${count} pipeline stages.`);
  }
  const cost = layers.map((l) => l.forwardFlops + l.backwardFlops + 1);
  const prefix = [0];
  for (const c of cost) prefix.push(prefix[prefix.length - 1] + c);
  const span = (i: number, j: number) => prefix[j] - prefix[i];
  const n = layers.length;
  const splitsShared = cutSplitsSharedLayer(model);
  // best[k][j]: the least possible maximum stage cost when the first j layers form k stages.
  const best: number[][] = Array.from({ length: count + 1 }, () => new Array(n + 1).fill(Infinity));
  const cut: number[][] = Array.from({ length: count + 1 }, () => new Array(n + 1).fill(0));
  best[0][0] = 0;
  for (let k = 1; k <= count; k++) {
    for (let j = k; j <= n; j++) {
      for (let i = k - 1; i < j; i++) {
        if (i > 0 && splitsShared(i)) continue;
        const value = Math.max(best[k - 1][i], span(i, j));
        if (value < best[k][j]) {
          best[k][j] = value;
          cut[k][j] = i;
        }
      }
    }
  }
  if (best[count][n] === Infinity) {
    throw new Error(`Cannot cut "${model.name}" into ${count} pipeline stages without separating the calls of a shared layer (${[...sharedLayerCalls(model).keys()].join(', ')}); use fewer stages.`);
  }
  const stages: string[][] = [];
  let j = n;
  for (let k = count; k >= 1; k--) {
    const i = cut[k][j];
    stages.unshift(layers.slice(i, j).map((l) => l.id));
    j = i;
  }
  return stages;
}

/**
 * Megatron's layout, found by pattern in any graph, for every tensor-parallel stage: a Dense whose
 * one consumer is a Dense of the same stage is column-parallel (when its activation is elementwise)
 * and that consumer row-parallel, its partial sums completed by one all-reduce (the MLP block);
 * multi-head attention is split by heads; an embedding by its vocabulary; a model output that is a
 * linear Dense (logits) is class-sharded (column-parallel with split logits, Whale's pattern). A
 * layer whose split does not divide by the degree stays replicated (shardingProblem says why).
 */
export function megatronSharding(model: ModelGraph, stages: Plan['stages']): Plan['sharding'] {
  const sharding: Plan['sharding'] = {};
  const byId = new Map(model.layers.map((l) => [l.id, l]));
  const consumers = new Map<string, string[]>();
  for (const layer of model.layers) for (const input of new Set(layer.inputs)) consumers.set(input, [...(consumers.get(input) ?? []), layer.id]);
  for (const stage of stages) {
    const t = stage.tensorParallel;
    if (t === 1) continue;
    const inStage = new Set(stage.layers);
    const fits = (id: string, weight: WeightSbp) => shardingProblem(byId.get(id)!, weight, t, inputShapeOf(model, byId.get(id)!)) === null;
    const isDense = (id: string) => ['dense', 'denseNd'].includes(byId.get(id)?.spec.kind ?? '');
    for (const id of stage.layers) {
      const layer = byId.get(id)!;
      if (sharding[id]) continue;
      const kind = layer.spec.kind;
      if (kind === 'multiHeadAttention' && fits(id, 'S(1)')) sharding[id] = { weight: 'S(1)' };
      if (kind === 'embedding' && fits(id, 'S(0)')) sharding[id] = { weight: 'S(0)' };
      if (!isDense(id)) continue;
      const next = consumers.get(id) ?? [];
      if (model.outputs.includes(id)) {
        const logits = (layer.spec as { activation: string }).activation === 'linear';
        if (logits && next.length === 0 && fits(id, 'S(1)')) sharding[id] = { weight: 'S(1)' };
      } else if (next.length === 1 && inStage.has(next[0]) && isDense(next[0]) && !model.outputs.includes(next[0]) && !sharding[next[0]] && fits(id, 'S(1)') && fits(next[0], 'S(0)')) {
        sharding[id] = { weight: 'S(1)' };
        sharding[next[0]] = { weight: 'S(0)' };
      }
    }
  }
  return sharding;
}

/**
 * A named plan such as `pp2-dp2` (2 pipeline stages × 2 data-parallel replicas), optionally with
 * `-tp2` for 2-way operator sharding of every stage (megatronSharding) and `-m8` for 8
 * micro-batches. Stages are balanced by cost.
 */
export function presetPlan(model: ModelGraph, preset: string, options: PresetOptions = {}): Plan {
  const match = /^pp(\d+)-dp(\d+)(?:-tp(\d+))?(?:-m(\d+))?$/.exec(preset.trim());
  if (!match) {
    throw new Error(`Unknown plan preset "${preset}". Use the form pp<stages>-dp<replicas>[-tp<shards>][-m<micro-batches>], e.g. pp2-dp2, pp1-dp2-tp2 or pp2-dp2-m8.`);
  }
  const pipeline = Number(match[1]);
  const dataParallel = Number(match[2]);
  const tensorParallel = match[3] ? Number(match[3]) : 1;
  if (pipeline < 1 || dataParallel < 1 || tensorParallel < 1) throw new Error(`Plan preset "${preset}": degrees must be at least 1.`);
  // Before the stage search, whose table grows with stages × layers.
  if (pipeline * dataParallel * tensorParallel > LIMITS.devices) {
    throw new Error(`Plan preset "${preset}" needs ${pipeline * dataParallel * tensorParallel} agents (stages × replicas × shards); Shoal runs at most ${LIMITS.devices}.`);
  }
  const microBatches = options.microBatches ?? (match[4] ? Number(match[4]) : pipeline > 1 ? 4 : 1);
  if (microBatches > LIMITS.microBatches) throw new Error(`Plan preset "${preset}": ${microBatches} micro-batches; at most ${LIMITS.microBatches}.`);
  const stages = balancedStages(model, pipeline).map((layers) => ({ layers, dataParallel, tensorParallel }));
  return {
    version: 1,
    model: model.name,
    stages,
    globalBatch: options.globalBatch ?? DEFAULT_GLOBAL_BATCH,
    microBatches,
    schedule: 'gpipe',
    zero: 0,
    recompute: false,
    sharding: megatronSharding(model, stages),
    optimizer: options.optimizer ?? DEFAULT_OPTIMIZER,
    seed: options.seed ?? DEFAULT_SEED,
  };
}
