import type { AgentRequestOf } from '../../engine/protocol/agentRequests.js';
import * as tf from '@tensorflow/tfjs-core';
import '@tensorflow/tfjs-core/dist/register_all_gradients';
import type { LayerNode } from '../../engine/model/graph.js';
import { microBatchSize, placements } from '../../engine/plan/placement.js';
import type { AllReduceMeasurement, LayerTiming, LinkMeasurement } from '../../engine/protocol/profile.js';
import { allReduce } from '../comm/collectives.js';
import { ProcessGroup } from '../comm/processGroup.js';
import type * as tfl from '@tensorflow/tfjs-layers/dist/index.js';
import type { OutputLoss } from '../../engine/model/trainingSpec.js';
import { targetShape } from '../../engine/data/modelArrays.js';
import { layersModelOf } from '../exec/graph/modelOfGraph.js';
import { layerOfNode, namedWeights } from '../exec/graph/layersModel.js';
import { nodeBackward } from '../exec/graph/nodeBackward.js';
import { callNode, type CallMode } from '../exec/graph/nodeCall.js';
import { lossSum } from '../exec/losses.js';
import { createOptimizer } from '../exec/optimizer.js';
import { probeLinks } from './probeLinks.js';
import type { StageContext } from './stageContext.js';

/** Id of the pseudo-layer that times the loss (softmax cross-entropy and its gradient) of a last stage. */
export const LOSS_TIMING_ID = '#loss';

export interface ProfileOptions {
  /** Batch sizes to time each layer at (several sizes separate per-call overhead from per-sample cost). */
  batches: number[];
  /** Timed repetitions after one warm-up call; the median is kept. */
  repeats: number;
  /** Time this agent's stage (default) or every layer of the model. */
  scope?: 'stage' | 'model';
  /** Agents timing at the same moment, recorded with each timing (absent: this one alone). */
  concurrent?: number;
}

const median = (xs: number[]) => {
  const s = [...xs].sort((a, b) => a - b);
  const mid = s.length >> 1;
  return s.length % 2 ? s[mid] : (s[mid - 1] + s[mid]) / 2;
};

const yieldToEventLoop = () => new Promise<void>((resolve) => setImmediate(resolve));

/**
 * Backends that run every op to completion before returning (wasm, cpu): their calls need no
 * read-back to be timed, and a read-back would add a copy the training step never makes. Native
 * TensorFlow (tfjs-node, tfjs-node-gpu) may queue work on a device, so it is read back like WebGL.
 */
const SYNCHRONOUS_BACKENDS = new Set(['wasm', 'cpu']);

/** Milliseconds of `f`; on a lazy backend its results are read back so the work has finished. */
function timeCall(f: () => tf.Tensor[]): number {
  const readBack = !SYNCHRONOUS_BACKENDS.has(tf.getBackend());
  const start = performance.now();
  const outs = f();
  if (readBack) for (const t of outs) t.dataSync();
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

/** Valid ids for a layer that looks rows up (Embedding): 0, 1, … below its input dimension. */
function ids(shape: number[], below: number): tf.Tensor {
  const size = shape.reduce((a, b) => a * b, 1);
  return tf.tensor(Float32Array.from({ length: size }, (_, i) => (i * 7) % Math.max(below, 1)), shape);
}

/**
 * Time each layer call of this agent's stage (or of the whole model) alone, at each batch size, with
 * the very calls the stage's training passes make, for every layer kind tfjs-layers builds: the
 * forward call (nodeCall.ts, output kept) and its backward from the kept input and output
 * (nodeBackward.ts: Dense by hand, other layers re-run under a tape) plus adding its parameter
 * gradients into an accumulator, as every micro-batch does. A stage holding a model output also times
 * the loss and its gradient (LOSS_TIMING_ID).
 */
export async function profileLayers(ctx: StageContext, options: ProfileOptions): Promise<LayerTiming[]> {
  const model = ctx.graphStage?.model ?? (await layersModelOf(ctx.model, ctx.plan.seed));
  const out: LayerTiming[] = [];
  const timed = new Set(options.scope === 'model' ? ctx.model.layers.map((l) => l.id) : ctx.plan.stages[ctx.me.stage].layers);
  const byId = new Map(ctx.model.layers.map((l) => [l.id, l]));
  const concurrent = options.concurrent && options.concurrent > 1 ? { concurrent: options.concurrent } : {};
  for (const node of ctx.model.layers) {
    if (!timed.has(node.id)) continue;
    const inputShapes = node.inputs.map((id) => byId.get(id)!.outputShape);
    const layer = node.spec.kind === 'input' ? null : layerOfNode(model, node.id);
    for (const batch of options.batches) out.push({ ...(await profileNode(ctx, node, layer, inputShapes, batch, options.repeats)), ...concurrent });
  }
  for (const loss of ctx.measures.losses.filter((l) => timed.has(l.output))) {
    for (const batch of options.batches) out.push({ ...(await profileLoss(ctx, loss, byId.get(loss.output)!, batch, options.repeats)), ...concurrent });
  }
  if (ctx.graphStage === null) model.dispose();
  return out;
}

async function profileNode(ctx: StageContext, node: LayerNode, layer: tfl.layers.Layer | null, inputShapes: number[][], batch: number, repeats: number): Promise<LayerTiming> {
  const base = { id: node.id, rank: ctx.me.rank, device: ctx.me.device, batch, forwardFlops: node.forwardFlops, backwardFlops: node.backwardFlops };
  // An input layer passes its batch on untouched: nothing to time.
  if (!layer) return { ...base, forwardMs: 0, backwardMs: 0, forwardMsPerSample: 0, backwardMsPerSample: 0 };
  const lookup = layer.getClassName() === 'Embedding' ? (layer.getConfig() as { inputDim: number }).inputDim : undefined;
  const inputs = inputShapes.map((shape) => (lookup === undefined ? filler([batch, ...shape]) : ids([batch, ...shape], lookup)));
  const mode: CallMode = { training: true, pass: { seed: ctx.plan.seed, step: 0, samples: Array.from({ length: batch }, (_, i) => i) } };
  const params = namedWeights(layer, true).map((w) => w.variable);
  const y = tf.tidy(() => callNode(node, layer, inputs, mode).clone());
  const dy = filler(y.shape);
  const wanted = inputs.map(() => lookup === undefined);
  const accumulated = params.map((p) => tf.zerosLike(p));
  const forward = () => [tf.tidy(() => callNode(node, layer, inputs, mode).clone())];
  const backward = () =>
    tf.tidy(() => {
      const grads = nodeBackward(node, layer, inputs, y, dy, params, wanted, mode);
      const sums = grads.params.map((g, j) => (g ? tf.add(accumulated[j], g) : accumulated[j].clone()));
      return [...grads.inputs.filter((g): g is tf.Tensor => g !== null), ...sums];
    });
  const forwards: number[] = [];
  const backwards: number[] = [];
  for (let i = 0; i <= repeats; i++) {
    const f = timeCall(forward);
    const b = timeCall(backward);
    // Let heartbeats out between repetitions: a wide layer at a large batch takes a good part of a second.
    await yieldToEventLoop();
    if (i === 0) continue; // warm-up: kernel set-up, first allocations
    forwards.push(f);
    backwards.push(b);
  }
  tf.dispose([...inputs, ...accumulated, y, dy]);
  const forwardMs = median(forwards);
  const backwardMs = median(backwards);
  return { ...base, forwardMs, backwardMs, forwardMsPerSample: forwardMs / batch, backwardMsPerSample: backwardMs / batch };
}

/** A last stage's loss of one output and its gradient, as the stage computes them (losses.ts). */
async function profileLoss(ctx: StageContext, loss: OutputLoss, output: LayerNode, batch: number, repeats: number): Promise<LayerTiming> {
  const outputs = filler([batch, ...output.outputShape]);
  const shape = targetShape(loss, output.outputShape);
  const width = output.outputShape[output.outputShape.length - 1] ?? 1;
  const targets = loss.loss === 'sparseCategoricalCrossentropy' ? ids([batch, ...shape], width) : tf.tidy(() => tf.abs(filler([batch, ...shape])));
  const step = () =>
    tf.tidy(() => {
      const { value, grad } = tf.valueAndGrad((z: tf.Tensor) => lossSum(loss, z, targets, batch))(outputs);
      value.dataSync();
      return [grad];
    });
  const times: number[] = [];
  for (let i = 0; i <= repeats; i++) {
    const ms = timeCall(step);
    await yieldToEventLoop();
    if (i > 0) times.push(ms);
  }
  tf.dispose([outputs, targets]);
  const forwardMs = median(times);
  return { id: LOSS_TIMING_ID, rank: ctx.me.rank, device: ctx.me.device, batch, forwardMs, backwardMs: 0, forwardMsPerSample: forwardMs / batch, backwardMsPerSample: 0, forwardFlops: 0, backwardFlops: 0 };
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

/**
 * The group whose all-reduce this agent times: its stage's data-parallel group, or else every rank of
 * the job when this agent is linked to all of them (a pipeline of two agents). Every member computes
 * the same group from the plan.
 */
function allReduceGroup(ctx: StageContext): ProcessGroup | null {
  if (ctx.dataParallelGroup.length > 1) return new ProcessGroup(ctx.me.rank, ctx.dataParallelGroup, ctx.mesh.links, { name: 'profiled data-parallel group' });
  const everyone = placements(ctx.plan).map((p) => p.rank);
  if (everyone.length < 2 || !everyone.every((r) => r === ctx.me.rank || ctx.mesh.links.has(r))) return null;
  return new ProcessGroup(ctx.me.rank, everyone, ctx.mesh.links, { name: 'profiled group of every rank' });
}

/**
 * Time the gradient all-reduce as GradientSync runs a bucket of each size: the gradient copied out of
 * its tensor into a flat buffer, summed over the group in place, and made a tensor again for the
 * update. Every member starts each repetition together (a one-float all-reduce first); the median over
 * the repetitions is kept. `alone`: the copies only, without a group (what a stage without data
 * parallelism still does every step, and the part of an all-reduce that is not communication).
 */
export async function profileAllReduce(ctx: StageContext, sizes: number[], repeats: number, alone = false): Promise<AllReduceMeasurement[]> {
  const group = alone ? null : allReduceGroup(ctx);
  if ((!alone && !group) || sizes.length === 0) return [];
  const out: AllReduceMeasurement[] = [];
  for (const bytes of sizes) {
    const n = Math.max(1, Math.floor(bytes / 4));
    const grad = tf.fill([n], 0.5);
    const times: number[] = [];
    for (let i = 0; i <= repeats; i++) {
      if (group) await allReduce(group, new Float32Array(1), `probe/ar/${n}/${i}/sync`);
      else await yieldToEventLoop();
      const start = performance.now();
      const buffer = new Float32Array(n);
      buffer.set(grad.dataSync() as Float32Array);
      if (group) await allReduce(group, buffer, `probe/ar/${n}/${i}`);
      tf.tensor(buffer.slice(), [n], 'float32').dispose();
      if (i > 0) times.push(performance.now() - start);
    }
    grad.dispose();
    out.push({ rank: ctx.me.rank, device: ctx.me.device, members: group?.size ?? 1, bytes: n * 4, ms: median(times) });
  }
  return out;
}

/** The coordinator's request (engine/protocol/agentRequests.ts says what each field asks). */
export type ProfileRequest = AgentRequestOf<'profile'>;

/**
 * The agent's start-of-job profile, or the part of it the coordinator asks for: its layers and its
 * optimizer update (while the other agents wait, so that they do not share the cores), its links and
 * the gradient all-reduce (every agent at once: they take two).
 */
export async function profileAgent(
  ctx: StageContext,
  request: ProfileRequest,
): Promise<{ layers: LayerTiming[]; optimizerMsPerParam?: number; optimizerMsPerTensor?: number; links: LinkMeasurement[]; allReduce: AllReduceMeasurement[] }> {
  const repeats = request.repeats ?? 3;
  const batches = request.batches?.length ? request.batches : [microBatchSize(ctx.plan)];
  const myTurn = request.turn === undefined || request.turn === null || request.turn === ctx.me.rank;
  const scope = !myTurn ? 'none' : (request.layers ?? 'stage');
  const concurrent = request.concurrent ?? 1;
  const layers = scope === 'none' ? [] : await profileLayers(ctx, { batches, repeats, scope, concurrent });
  const solo = scope !== 'none' && concurrent <= 1;
  const optimizer = solo ? profileOptimizer(ctx, repeats) : undefined;
  const probe = request.links !== false;
  const links = probe ? await probeLinks(ctx) : [];
  const sizes = (request.allReduceBytes ?? []).filter((b) => b > 0);
  const allReduceTimings = [...(solo ? await profileAllReduce(ctx, sizes, repeats, true) : []), ...(probe ? await profileAllReduce(ctx, sizes, repeats) : [])];
  return { layers, optimizerMsPerParam: optimizer?.msPerParam, optimizerMsPerTensor: optimizer?.msPerTensor, links, allReduce: allReduceTimings };
}
