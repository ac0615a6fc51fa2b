import type { ModelGraph } from '../model/graph.js';
import type { OptimizerConfig, Plan } from '../plan/plan.js';
import type { Layout } from './layout.js';

/** The knobs chosen per layout: they change time and memory but not which device holds which layer. */
export interface Knobs {
  microBatches: number;
  schedule: 'gpipe' | '1f1b';
  zero: number;
}

export interface PlanBasics {
  globalBatch: number;
  optimizer: OptimizerConfig;
  seed: number;
}

/** A layout with its knobs as a Plan document, ready to validate, price and hand to the agents. */
export function buildPlan(model: ModelGraph, layout: Layout, knobs: Knobs, basics: PlanBasics): Plan {
  return {
    version: 1,
    model: model.name,
    stages: layout.stages.map((s) => ({
      layers: model.layers.slice(s.from, s.to).map((l) => l.id),
      dataParallel: s.dataParallel,
      tensorParallel: s.tensorParallel,
      devices: [...s.devices],
    })),
    globalBatch: basics.globalBatch,
    microBatches: knobs.microBatches,
    schedule: knobs.schedule,
    zero: knobs.zero,
    recompute: false,
    sharding: structuredClone(layout.sharding),
    ...(layout.virtualNodes ? { virtualNodes: { total: layout.virtualNodes.total, perReplica: [...layout.virtualNodes.perReplica] } } : {}),
    optimizer: basics.optimizer,
    seed: basics.seed,
  };
}

/** Micro-batch counts (powers of 2 up to `max`) that cut every replica's — or virtual node's — share exactly. */
export function microBatchChoices(layout: Layout, globalBatch: number, max: number): number[] {
  const parts = layout.virtualNodes ? [layout.virtualNodes.total] : [...new Set(layout.stages.map((s) => s.dataParallel))];
  const out: number[] = [];
  for (let m = 1; m <= max; m *= 2) if (parts.every((k) => globalBatch % (k * m) === 0)) out.push(m);
  return out;
}

/**
 * Knob settings searched for a layout: ZeRO only where some stage has replicas; 1F1B wherever it
 * differs from GPipe — with one stage and several micro-batches it is gradient accumulation, which
 * holds one micro-batch's activations instead of all of them.
 */
export function knobChoices(layout: Layout, globalBatch: number, maxMicroBatches: number): Knobs[] {
  const replicated = layout.stages.some((s) => s.dataParallel > 1);
  const out: Knobs[] = [];
  for (const microBatches of microBatchChoices(layout, globalBatch, maxMicroBatches)) {
    const schedules = layout.stages.length > 1 || microBatches > 1 ? (['gpipe', '1f1b'] as const) : (['gpipe'] as const);
    for (const schedule of schedules) {
      for (const zero of replicated ? [0, 1, 2, 3] : [0]) out.push({ microBatches, schedule, zero });
    }
  }
  return out;
}
