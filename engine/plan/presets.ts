import type { ModelGraph } from '../model/graph.js';
import { cutSplitsSharedLayer, sharedLayerCalls } from '../model/sharedLayers.js';
import { LIMITS } from './limits.js';
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
 * Megatron's pattern over the Dense layers of every tensor-parallel stage: column-parallel, then
 * row-parallel (whose partial sums one all-reduce completes), alternating; the model's classifier is
 * class-sharded (column-parallel with split logits, Whale's pattern). A layer whose split axis does
 * not divide by the degree stays replicated.
 */
export function megatronSharding(model: ModelGraph, stages: Plan['stages']): Plan['sharding'] {
  const sharding: Plan['sharding'] = {};
  const byId = new Map(model.layers.map((l) => [l.id, l]));
  for (const stage of stages) {
    const t = stage.tensorParallel;
    if (t === 1) continue;
    let column = true;
    for (const id of stage.layers) {
      const layer = byId.get(id)!;
      if (layer.spec.kind !== 'dense') continue;
      const inputs = byId.get(layer.inputs[0])?.outputShape ?? [];
      const features = inputs[inputs.length - 1];
      if (model.outputs.includes(id)) {
        if (layer.spec.units % t === 0) sharding[id] = { weight: 'S(1)' };
      } else if (column && layer.spec.units % t === 0) {
        sharding[id] = { weight: 'S(1)' };
        column = false;
      } else if (!column && features % t === 0) {
        sharding[id] = { weight: 'S(0)' };
        column = true;
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
