import type { ClusterSpec } from '../cluster/spec.js';
import type { ModelGraph } from '../model/graph.js';
import { microBatchSize, placements } from '../plan/placement.js';
import type { Plan } from '../plan/plan.js';
import { virtualNodesPerReplica } from '../plan/virtualNodes.js';
import { simulatePipeline, type StageCost } from '../sim/simulatePipeline.js';
import { p2pSeconds, ringAllGatherSeconds, ringAllReduceSeconds } from './collectives.js';
import { DEFAULT_BUCKET_BYTES, dataParallelRing, devicesOfReplica, link, ringLink, type CostContext } from './costContext.js';
import { deviceFlops } from './deviceSpeed.js';
import { deviceMemory } from './deviceMemory.js';
import { stepTraffic } from './linkTraffic.js';
import type { CostOptions, PlanCost } from './planCost.js';
import { stageFacts, type GroupCollective, type StageFacts } from './stageFacts.js';

/**
 * The optimizer update is elementwise and memory-bound: ~10 FLOPs per parameter for Adam run at a few
 * percent of the device's peak. A small term, kept so that huge replicated layers are not free.
 */
const UPDATE_FLOPS_PER_PARAM = 10;
const UPDATE_EFFICIENCY = 0.05;

/** Per-micro-batch and per-step costs of stage `s` as served by replica `r`, in milliseconds. */
function stageCost(ctx: CostContext, s: number, r: number): StageCost & { tensorParallelMs: number } {
  const { plan, facts, microBatch: b, scale } = ctx;
  const f = facts[s];
  const devices = devicesOfReplica(ctx, s, r);
  const speed = Math.min(...devices.map((d) => deviceFlops(ctx.cluster, d, ctx.options)));
  const profiled = profiledStageMs(ctx, f, devices[0], b);
  let forwardMs = profiled ? profiled.forward : ((b * f.forwardFlops) / speed) * 1000;
  let backwardMs = profiled ? profiled.backward : ((b * f.backwardFlops) / speed) * 1000;
  if (plan.recompute) backwardMs += forwardMs;

  const t = plan.stages[s].tensorParallel;
  let tensorParallelMs = 0;
  if (t > 1) {
    const { alpha, beta } = ringLink(ctx, devices);
    const seconds = (list: GroupCollective[]) =>
      list.reduce((sum, c) => sum + (c.kind === 'allReduce' ? ringAllReduceSeconds : ringAllGatherSeconds)(b * c.bytes * scale, t, alpha, beta), 0);
    const fwd = seconds(f.forwardCollectives);
    const bwd = seconds(f.backwardCollectives);
    forwardMs += fwd * 1000;
    backwardMs += bwd * 1000;
    tensorParallelMs = (fwd + bwd) * 1000;
  }

  const last = plan.stages.length - 1;
  const next = s < last ? devicesOfReplica(ctx, s + 1, r)[0] : undefined;
  const prev = s > 0 ? devicesOfReplica(ctx, s - 1, r)[0] : undefined;
  const sendActivationMs = next === undefined ? 0 : p2pSeconds(b * f.liveOutBytes * scale, link(ctx, devices[0], next).alpha, link(ctx, devices[0], next).beta) * 1000;
  const sendGradientMs = prev === undefined ? 0 : p2pSeconds(b * f.liveInBytes * scale, link(ctx, devices[0], prev).alpha, link(ctx, devices[0], prev).beta) * 1000;

  // Gradients of layers that ran batch-split inside the group are summed over the whole stage; the
  // others (sharded, or replicated on whole inputs) over the replicas holding the same shard.
  const gradientBytes = f.params * ctx.bytesPerElement;
  const stageRing = ctx.layout.filter((p) => p.stage === s).map((p) => p.device);
  const shardRing = dataParallelRing(ctx, s, 0);
  const ringSeconds = (bytes: number, ring: number[]) => {
    const { alpha, beta } = ringLink(ctx, ring);
    return ringAllReduceSeconds(bytes, ring.length, alpha, beta) + (plan.zero >= 3 ? 2 * ringAllGatherSeconds(bytes, ring.length, alpha, beta) : 0);
  };
  // ZeRO-3 also gathers every parameter for the forward and again for the backward pass.
  const allReduce = ringSeconds(f.batchSplitParams * ctx.bytesPerElement, stageRing) + ringSeconds((f.params - f.batchSplitParams) * ctx.bytesPerElement, shardRing);
  const bucket = ctx.options.allReduceBucketBytes ?? DEFAULT_BUCKET_BYTES;
  const allReduceOverlap = bucket > 0 && gradientBytes > 0 ? Math.max(0, 1 - bucket / gradientBytes) : 0;
  const deviceModel = ctx.cluster.devices[devices[0]].model;
  const measuredUpdate = ctx.options.profile?.optimizerMsPerParam?.[deviceModel];
  // Every layer with weights holds a kernel and a bias: two tensors, each with its own update ops.
  const weightTensors = 2 * f.layers.filter((l) => l.params > 0).length;
  const optimizerMs =
    measuredUpdate !== undefined
      ? f.params * measuredUpdate + weightTensors * (ctx.options.profile?.optimizerMsPerTensor?.[deviceModel] ?? 0)
      : ((f.params * UPDATE_FLOPS_PER_PARAM) / (speed * UPDATE_EFFICIENCY)) * 1000;
  return {
    forwardMs,
    backwardMs,
    sendActivationMs,
    sendGradientMs,
    allReduceMs: allReduce * 1000,
    allReduceOverlap,
    optimizerMs,
    activationBytes: b * f.liveOutBytes * scale,
    tensorParallelMs,
  };
}

/** Measured times of one micro-batch of `b` samples through the stage's layers on this device model, when a profile has all of them. */
function profiledStageMs(ctx: CostContext, f: StageFacts, device: number, b: number): { forward: number; backward: number } | undefined {
  const layers = ctx.options.profile?.layers;
  if (!layers) return undefined;
  const model = ctx.cluster.devices[device].model;
  let forward = 0;
  let backward = 0;
  for (const layer of f.layers) {
    const measured = layers[layer.id];
    if (!measured || measured.device !== model) return undefined;
    forward += (measured.forwardMsPerCall ?? 0) + b * measured.forwardMsPerSample;
    backward += (measured.backwardMsPerCall ?? 0) + b * measured.backwardMsPerSample;
  }
  return { forward, backward };
}

/**
 * Price a plan on a cluster: step time by simulating its schedule over per-stage compute and
 * communication costs, per-device memory, and the bytes each link carries per step. Heterogeneous
 * replicas are simulated one by one; the slowest sets the pace (the all-reduce waits for it).
 */
export function costOfPlan(plan: Plan, model: ModelGraph, cluster: ClusterSpec, options: CostOptions = {}): PlanCost {
  const bytesPerElement = options.bytesPerElement ?? (options.precision === 'mixed' ? 2 : 4);
  const ctx: CostContext = {
    plan,
    model,
    cluster,
    options,
    facts: plan.stages.map((_, s) => stageFacts(model, plan, s)),
    layout: placements(plan),
    microBatch: microBatchSize(plan),
    scale: bytesPerElement / 4,
    bytesPerElement,
  };
  const perReplica = virtualNodesPerReplica(plan);
  const replicas = plan.stages[0].dataParallel;
  let critical: { sim: ReturnType<typeof simulatePipeline>; costs: ReturnType<typeof stageCost>[] } | undefined;
  for (let r = 0; r < replicas; r++) {
    const costs = plan.stages.map((_, s) => stageCost(ctx, s, r));
    const sim = simulatePipeline(costs, (perReplica[r] ?? 1) * plan.microBatches, plan.schedule);
    if (!critical || sim.stepMs > critical.sim.stepMs) critical = { sim, costs };
  }
  const { sim, costs } = critical!;
  const stages = costs.map((c, s) => {
    const micro = (sim.computeMs[s] - c.optimizerMs) / (c.forwardMs + c.backwardMs || 1);
    const tensorParallelMs = micro * c.tensorParallelMs;
    return {
      stage: s,
      forwardMs: c.forwardMs,
      backwardMs: c.backwardMs,
      allReduceMs: c.allReduceMs,
      computeMs: sim.computeMs[s] - tensorParallelMs,
      exposedCommMs: sim.exposedCommMs[s] + tensorParallelMs,
    };
  });
  const slowest = stages.reduce((a, b) => (b.computeMs + b.exposedCommMs > a.computeMs + a.exposedCommMs ? b : a));
  const devices = ctx.layout.map((p) => deviceMemory(ctx, p));
  const traffic = stepTraffic(ctx, perReplica);
  return {
    stepMs: sim.stepMs,
    samplesPerSec: plan.globalBatch / (sim.stepMs / 1000),
    breakdown: {
      computeMs: slowest.computeMs,
      exposedCommMs: slowest.exposedCommMs,
      bubbleMs: Math.max(0, sim.stepMs - slowest.computeMs - slowest.exposedCommMs),
    },
    bubbleFraction: sim.bubbleFraction,
    stages,
    devices,
    peakMemoryBytes: Math.max(...devices.map((d) => d.memory.total)),
    fits: devices.every((d) => d.fits),
    commBytesPerStep: traffic.reduce((sum, l) => sum + l.bytes, 0),
    links: traffic,
    timeline: sim.events,
  };
}
