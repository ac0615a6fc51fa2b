import * as tf from '@tensorflow/tfjs-core';
import { PipeMareSchema, type PipeMareOptions } from '../../engine/plan/plan.js';
import { scheduleTraits } from '../../engine/plan/scheduleTraits.js';
import { bytesToFloats, floatsToBytes } from '../../engine/wire/frame.js';
import { ringAllReduce } from '../comm/ringAllReduce.js';
import { flatten, unflatten } from '../exec/flatTensors.js';
import type { StageContext } from '../runtime/stageContext.js';
import { microBatchIndices, stepIndices, virtualNodesOf } from './pipelineStep.js';
import { virtualNodesPerReplica } from '../../engine/plan/virtualNodes.js';
import type { RowRead } from '../data/prefetcher.js';
import { beginStep, trainingRows } from '../data/stepRows.js';
import { DiscrepancyCorrection, lrMultiplier } from './pipemare.js';
import type { TimelineEvent, TimelineKind } from '../../engine/protocol/timeline.js';
import { clockMs } from '../runtime/timelineRecorder.js';

/** What a stage reports for each step of an asynchronous run. */
export interface AsyncStepReport {
  step: number;
  /** This replica's share of the step's mean loss (last stage only). */
  loss: number;
  computeMs: number;
  allReduceMs: number;
  stats: { delay: number; utilization: number; lrMultiplier: number; correction: number };
  /** For sampled steps: every forward, backward and update this stage ran while the step was in flight. */
  timeline?: TimelineEvent[];
}

/** Per-stage state that lives across asynchronous chunks (epochs): the update count and δ. */
export interface AsyncState {
  updates: number;
  correction: DiscrepancyCorrection;
  options: PipeMareOptions;
}

export function createAsyncState(ctx: StageContext): AsyncState {
  const options = PipeMareSchema.parse(ctx.plan.pipemare ?? {});
  return { updates: 0, correction: new DiscrepancyCorrection(options), options };
}

interface Micro {
  step: number;
  v: number;
  m: number;
}

/**
 * PipeMare's asynchronous pipeline over steps [fromStep, toStep): the micro-batches of all those steps
 * flow as one stream in 1F1B order without a flush between steps, and each stage applies an update as
 * soon as a micro-batch's gradient is ready (all-reduced over its data-parallel group first). One weight
 * version per stage: the forward pass of a micro-batch uses the weights of its time and the backward
 * pass the current weights, corrected by T2 if enabled; the step size follows T1. The stream drains at
 * the end of the chunk so the coordinator can evaluate and checkpoint.
 */
export async function runAsyncPipeline(
  ctx: StageContext,
  state: AsyncState,
  fromStep: number,
  toStep: number,
  report: (r: AsyncStepReport) => void,
  timelineEverySteps = 0,
): Promise<void> {
  const { plan, mesh } = ctx;
  // The stage's executor (synthetic stages included); the whole stage behind it holds batch norm.
  const module = ctx.module;
  const optimizer = ctx.optimizer;
  if (!ctx.graphStage || !optimizer) throw new Error('The asynchronous schedule runs whole stages only; this stage is tensor-parallel (the plan should have been refused).');
  const vnodes = virtualNodesOf(ctx);
  const micros: Micro[] = [];
  for (let step = fromStep; step < toStep; step++) for (const v of vnodes) for (let m = 0; m < plan.microBatches; m++) micros.push({ step, v, m });
  const perStep = vnodes.length * plan.microBatches;
  const replicas = ctx.dataParallelGroup.length;
  const samplesOf = (micro: Micro) => microBatchIndices(plan, stepIndices(ctx, micro.step), micro.v, micro.m);
  // An update averages over the rows its replicas all-reduce: the micro-batch at this position of the
  // stream on every replica (all of the same size but on an epoch's smaller last step).
  const perReplica = virtualNodesPerReplica(plan, ctx.me.stage);
  const firstVirtualNodes = perReplica.map((_, r) => perReplica.slice(0, r).reduce((a, b) => a + b, 0));
  const updateRows = (micro: Micro) => {
    const all = stepIndices(ctx, micro.step);
    const position = vnodes.indexOf(micro.v);
    return firstVirtualNodes.reduce((n, first) => n + microBatchIndices(plan, all, first + position, micro.m).length, 0);
  };
  const order = scheduleTraits(plan.schedule).stageOrder(plan, ctx.me.stage, micros.length);

  const stash = new Map<number, { x: tf.Tensor; version: number }>();
  const perStepDone = new Map<number, number>();
  const stepLoss = new Map<number, number>();
  const stepStats = new Map<number, { delay: number; lr: number; computeMs: number; allReduceMs: number }>();
  const started = performance.now();
  let busyMs = 0;
  // A sampled step's timeline is a window: from its first micro-batch's forward on this stage until
  // its last update here, holding every pass of any step in between — the stream as it flowed.
  const sampled = (step: number) => timelineEverySteps > 0 && step % timelineEverySteps === 0;
  const windows = new Map<number, TimelineEvent[]>();
  const who = { stage: ctx.me.stage, rank: ctx.me.rank, replica: ctx.me.replica };
  const timed = async <T>(f: () => T | Promise<T>, kind: TimelineKind, i: number): Promise<T> => {
    const t0 = performance.now();
    const start = clockMs();
    const out = await f();
    busyMs += performance.now() - t0;
    if (kind === 'forward' && sampled(micros[i].step) && !windows.has(micros[i].step)) windows.set(micros[i].step, []);
    for (const events of windows.values()) events.push({ ...who, kind, micro: i, startMs: start, endMs: clockMs() });
    return out;
  };
  // Tags name a micro-batch by its position in the stream, which every replica shares (their virtual
  // nodes differ), so the replicas' per-micro-batch all-reduces pair up.
  const tag = (i: number, kind: string) => `a${micros[i].step}/${i}/${kind}`;

  const update = async (i: number, delay: number) => {
    const { step } = micros[i];
    const stats = stepStats.get(step) ?? { delay: 0, lr: 1, computeMs: 0, allReduceMs: 0 };
    // Every update is a whole optimizer step: it carries the regularization penalty once, each replica
    // its share, at the current weights (tfjs would differentiate it there too).
    stepLoss.set(step, (stepLoss.get(step) ?? 0) + (module.regularize?.(samplesOf(micros[i]).length / updateRows(micros[i])) ?? 0));
    let grads = module.takeGradients();
    if (replicas > 1) {
      const t0 = performance.now();
      const flat = flatten(grads);
      await ringAllReduce(flat, ctx.me.rank, ctx.dataParallelGroup, mesh.links, tag(i, 'ar'));
      grads.forEach((g) => g.dispose());
      grads = unflatten(flat, module.params);
      stats.allReduceMs += performance.now() - t0;
    }
    const lr = lrMultiplier(delay, state.updates, state.options);
    const t0 = performance.now();
    await timed(() => {
      const before = state.options.discrepancyCorrection ? module.params.map((p) => p.clone()) : [];
      optimizer.apply(module.params, grads, lr);
      state.correction.observe(before, module.params, delay);
      before.forEach((t) => t.dispose());
    }, 'optimizer', i);
    stats.computeMs += performance.now() - t0;
    state.updates += 1;
    stepStats.set(step, { ...stats, delay: Math.max(stats.delay, delay), lr });
    const done = (perStepDone.get(step) ?? 0) + 1;
    perStepDone.set(step, done);
    if (done === perStep) {
      await updateBatchNormStatistics(step);
      // Measuring the correction is the stage's own work (it reads every weight), not idle time.
      const correction = await timed(() => state.correction.size(module.params, stats.delay), 'optimizer', i);
      const events = windows.get(step);
      windows.delete(step);
      const elapsed = performance.now() - started;
      report({
        step,
        loss: (stepLoss.get(step) ?? 0) / perStep,
        computeMs: stats.computeMs,
        allReduceMs: stats.allReduceMs,
        stats: { delay: stats.delay, utilization: busyMs / Math.max(elapsed, 1e-9), lrMultiplier: lr, correction },
        timeline: events,
      });
    }
  };

  // Batch-norm moving statistics once per step, from the step's slices summed over the replicas, as
  // in the synchronous schedules (exec/graph/batchNormStatistics.ts).
  const updateBatchNormStatistics = async (step: number) => {
    const stats = ctx.graphStage!.batchNorm;
    if (stats.size === 0) return;
    const sums = stats.sums();
    if (replicas > 1) await ringAllReduce(sums, ctx.me.rank, ctx.dataParallelGroup, mesh.links, `a${step}/bn`);
    stats.apply(sums);
  };

  // As in the synchronous schedules, the rows of a step's micro-batches and the next step's are read
  // ahead beside the compute, when the stream reaches the step's first forward pass here.
  const readsData = ctx.prevRank === null || ctx.nextRank === null;
  const rows = readsData ? trainingRows(ctx.data) : null;
  let plannedStep = -1;
  const stepReads = (step: number): RowRead[] => vnodes.flatMap((v) => Array.from({ length: plan.microBatches }, (_, m) => samplesOf({ step, v, m })))
    .flatMap((indices) => [...(ctx.prevRank === null ? [{ names: ctx.feeds.inputs, indices }] : []), ...(ctx.nextRank === null ? [{ names: ctx.feeds.targets, indices }] : [])]);

  for (const op of order) {
    const i = op.micro;
    const micro = micros[i];
    if (op.kind === 'forward') {
      const samples = samplesOf(micro);
      const inShape = [samples.length, ...module.inputShape];
      module.setPass?.({ seed: plan.seed, step: micro.step, samples });
      if (rows && micro.step !== plannedStep) {
        plannedStep = micro.step;
        beginStep(rows, micro.step, stepReads);
      }
      const x = ctx.prevRank === null ? tf.tensor(await rows!.take(ctx.feeds.inputs, samples), inShape) : tf.tensor(bytesToFloats((await mesh.link(ctx.prevRank).receive(tag(i, 'act'))).payload), inShape, 'float32');
      if (ctx.nextRank === null) {
        // The last stage has no delay: loss, backward and update happen together.
        const targets = await rows!.take(ctx.feeds.targets, samples);
        const result = await timed(() => module.lossBackward(x, targets, samples.length, updateRows(micro)), 'forward', i);
        stepLoss.set(micro.step, (stepLoss.get(micro.step) ?? 0) + result.loss);
        x.dispose();
        if (ctx.prevRank !== null && result.dx) mesh.link(ctx.prevRank).send({ type: 'tensor', tag: tag(i, 'grad') }, floatsToBytes(result.dx.dataSync() as Float32Array));
        result.dx?.dispose();
        await update(i, 0);
      } else {
        const y = await timed(() => module.forward(x, samples.length), 'forward', i);
        mesh.link(ctx.nextRank).send({ type: 'tensor', tag: tag(i, 'act') }, floatsToBytes(y.dataSync() as Float32Array));
        y.dispose();
        stash.set(i, { x, version: state.updates });
      }
    } else if (ctx.nextRank !== null) {
      const size = samplesOf(micro).length;
      const dy = tf.tensor(bytesToFloats((await mesh.link(ctx.nextRank).receive(tag(i, 'grad'))).payload), [size, ...module.outputShape], 'float32');
      const { x, version } = stash.get(i)!;
      stash.delete(i);
      const delay = state.updates - version;
      const dx = await timed(async () => {
        // PipeMare's T2 is part of the backward pass: the weights it differentiates at.
        const corrected = state.correction.weightsFor(module.params, delay);
        const out = await module.backward(x, dy, size, undefined, corrected ?? undefined);
        corrected?.forEach((t) => t.dispose());
        return out;
      }, 'backward', i);
      dy.dispose();
      x.dispose();
      if (ctx.prevRank !== null && dx) mesh.link(ctx.prevRank).send({ type: 'tensor', tag: tag(i, 'grad') }, floatsToBytes(dx.dataSync() as Float32Array));
      dx?.dispose();
      await update(i, delay);
    }
  }
}
