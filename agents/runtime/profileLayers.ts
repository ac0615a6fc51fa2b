import * as tf from '@tensorflow/tfjs-core';
import '@tensorflow/tfjs-core/dist/register_all_gradients';
import type { LayerNode } from '../../engine/model/graph.js';
import { microBatchSize } from '../../engine/plan/placement.js';
import type { LayerTiming, LinkMeasurement } from '../../engine/protocol/profile.js';
import { applyLayer, layerParams } from '../exec/layerOps.js';
import { createOptimizer } from '../exec/optimizer.js';
import { probeLinks } from './probeLinks.js';
import type { StageContext } from './stageContext.js';

export interface ProfileOptions {
  /** Batch sizes to time each layer at (several sizes separate per-call overhead from per-sample cost). */
  batches: number[];
  /** Timed repetitions after one warm-up call; the median is kept. */
  repeats: number;
}

const median = (xs: number[]) => {
  const s = [...xs].sort((a, b) => a - b);
  const mid = s.length >> 1;
  return s.length % 2 ? s[mid] : (s[mid - 1] + s[mid]) / 2;
};

/** Milliseconds of `f`, which returns tensors that are read back (so lazy backends finish the work). */
function timeCall(f: () => tf.Tensor[]): number {
  const start = performance.now();
  const outs = tf.tidy(f);
  for (const t of outs) t.dataSync();
  const ms = performance.now() - start;
  outs.forEach((t) => t.dispose());
  return ms;
}

/** Deterministic pseudo-random values in [-1, 1): the timings do not depend on the data. */
function filler(shape: number[]): tf.Tensor {
  const size = shape.reduce((a, b) => a * b, 1);
  const values = new Float32Array(size);
  for (let i = 0; i < size; i++) values[i] = ((i * 2654435761) % 1000) / 500 - 1;
  return tf.tensor(values, shape);
}

/**
 * Time each layer of this agent's stage alone, at each batch size: its forward pass, and its gradient
 * (tf.grads of that layer with respect to its input and parameters, as the stage's backward pass runs
 * it). The gradient call recomputes the forward, so the layer's backward is reported as the difference.
 */
export function profileLayers(ctx: StageContext, options: ProfileOptions): LayerTiming[] {
  const out: LayerTiming[] = [];
  // The whole stage's layers, from the model graph: a tensor-parallel shard times the unsharded layers.
  const ids = new Set(ctx.plan.stages[ctx.me.stage].layers);
  const byId = new Map(ctx.model.layers.map((l) => [l.id, l]));
  for (const layer of ctx.model.layers) {
    if (!ids.has(layer.id)) continue;
    const shapeIn = byId.get(layer.inputs[0])?.outputShape ?? layer.outputShape;
    for (const batch of options.batches) out.push(profileLayer(ctx, layer, shapeIn, batch, options.repeats));
  }
  return out;
}

function profileLayer(ctx: StageContext, layer: LayerNode, inputShape: number[], batch: number, repeats: number): LayerTiming {
  const base = { id: layer.id, rank: ctx.me.rank, device: ctx.me.device, batch, forwardFlops: layer.forwardFlops, backwardFlops: layer.backwardFlops };
  // An input layer passes its batch on untouched: nothing to time.
  if (layer.spec.kind === 'input') return { ...base, forwardMs: 0, backwardMs: 0, forwardMsPerSample: 0, backwardMsPerSample: 0 };
  const specs = layerParams(layer, inputShape, ctx.plan.seed);
  const params = specs.map((p) => tf.tensor(p.init, p.shape));
  const x = filler([batch, ...inputShape]);
  const dy = filler([batch, ...layer.outputShape]);
  const gradsOf = tf.grads((input: tf.Tensor, ...ps: tf.Tensor[]) => applyLayer(layer, input, ps));
  const forward = () => [applyLayer(layer, x, params)];
  const gradient = () => gradsOf([x, ...params], dy);
  const forwards: number[] = [];
  const gradients: number[] = [];
  for (let i = 0; i <= repeats; i++) {
    const f = timeCall(forward);
    const g = timeCall(gradient);
    if (i === 0) continue; // warm-up: kernel set-up, first allocations
    forwards.push(f);
    gradients.push(g);
  }
  [...params, x, dy].forEach((t) => t.dispose());
  const forwardMs = median(forwards);
  const backwardMs = Math.max(0, median(gradients) - forwardMs);
  return { ...base, forwardMs, backwardMs, forwardMsPerSample: forwardMs / batch, backwardMsPerSample: backwardMs / batch };
}

/** Median milliseconds of one update by a fresh optimizer of the plan's kind on copies of `like`. */
function timeUpdates(ctx: StageContext, like: tf.Tensor[], repeats: number): number {
  const optimizer = createOptimizer(ctx.plan.optimizer);
  const copies = like.map((p) => tf.variable(p.clone(), true));
  const times: number[] = [];
  for (let i = 0; i <= repeats; i++) {
    const grads = copies.map((p) => tf.onesLike(p)); // apply() disposes the gradients it is given
    const start = performance.now();
    optimizer.apply(copies, grads);
    copies[0].dataSync();
    if (i > 0) times.push(performance.now() - start);
  }
  copies.forEach((t) => t.dispose());
  optimizer.dispose();
  return median(times);
}

/**
 * Cost of one optimizer update as per-tensor overhead plus per-parameter work: a fresh optimizer of
 * the plan's kind updates copies of the stage's weights, and one large tensor; the two timings give
 * the two terms. The real optimizer's state is untouched. Undefined for a stage without weights.
 */
export function profileOptimizer(ctx: StageContext, repeats: number): { msPerParam: number; msPerTensor: number } | undefined {
  const params = ctx.module.params;
  const count = params.reduce((n, p) => n + p.size, 0);
  if (count === 0) return undefined;
  const big = tf.zeros([1 << 18]);
  const tBig = timeUpdates(ctx, [big], repeats);
  big.dispose();
  const tStage = timeUpdates(ctx, params, repeats);
  const n = params.length;
  const size = 1 << 18;
  // tStage = n·c + count·k ; tBig = c + size·k
  const det = n * size - count;
  let k = det !== 0 ? (tBig * n - tStage) / det : tStage / count;
  let c = tBig - size * k;
  if (k < 0 || c < 0) {
    k = Math.max(0, Math.min(tStage / count, tBig / size));
    c = Math.max(0, (tStage - count * k) / n);
  }
  return { msPerParam: k, msPerTensor: c };
}

/** The agent's whole start-of-job profile: its layers, its optimizer update, its links. */
export async function profileAgent(
  ctx: StageContext,
  request: { batches?: unknown; repeats?: unknown },
): Promise<{ layers: LayerTiming[]; optimizerMsPerParam?: number; optimizerMsPerTensor?: number; links: LinkMeasurement[] }> {
  const repeats = Math.max(1, Number(request.repeats ?? 3));
  const batches = Array.isArray(request.batches) && request.batches.length ? request.batches.map(Number) : [microBatchSize(ctx.plan)];
  const layers = profileLayers(ctx, { batches, repeats });
  const optimizer = profileOptimizer(ctx, repeats);
  const links = await probeLinks(ctx);
  return { layers, optimizerMsPerParam: optimizer?.msPerParam, optimizerMsPerTensor: optimizer?.msPerTensor, links };
}
