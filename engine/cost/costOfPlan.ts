import type { ClusterSpec } from '../cluster/spec.js';
import type { ModelGraph } from '../model/graph.js';
import { microBatchSize, placements } from '../plan/placement.js';
import type { Plan } from '../plan/plan.js';
import { virtualNodesPerReplica } from '../plan/virtualNodes.js';
import { simulatePipeline, type StageCost } from '../sim/simulatePipeline.js';
import { p2pSeconds, ringAllGatherSeconds, ringAllReduceSeconds } from './collectives.js';
import { dataParallelRing, devicesOfReplica, link, ringLink, type CostContext } from './costContext.js';
import { deviceFlops } from './deviceSpeed.js';
import { deviceMemory } from './deviceMemory.js';
import { passOverheadMs, runtimeOverheads } from './runtimeOverheads.js';
import { stepTraffic } from './linkTraffic.js';
import type { TimelineEvent } from '../protocol/timeline.js';
import type { CostOptions, PlanCost } from './planCost.js';
import { stageFacts, type GroupCollective, type StageFacts } from './stageFacts.js';
import { GRADIENT_BUCKET_BYTES } from '../plan/runtimeConstants.js';

/**
 * The optimizer update is elementwise and memory-bound: ~10 FLOPs per parameter for Adam run at a few
 * percent of the device's peak. A small term, kept so that huge replicated layers are not free.
 */
const UPDATE_FLOPS_PER_PARAM = 10;
const UPDATE_EFFICIENCY = 0.05;

/** Per-micro-batch and per-step costs of stage `s` as served by replica `r`, in milliseconds. */
function stageCost(ctx: CostContext, s: number, r: number, shared = 1): StageCost & { tensorParallelMs: number } {
  const { plan, facts, microBatch: b, scale } = ctx;
  const f = facts[s];
  const devices = devicesOfReplica(ctx, s, r);
  const speed = Math.min(...devices.map((d) => deviceFlops(ctx.cluster, d, ctx.options)));
  const profiled = profiledStageMs(ctx, f, devices[0], b);
  // `shared`: how much other agents computing on the same host at the same time slow this stage down.
  let forwardMs = (profiled ? profiled.forward : ((b * f.forwardFlops) / speed) * 1000) * shared;
  let backwardMs = (profiled ? profiled.backward : ((b * f.backwardFlops) / speed) * 1000) * shared;
  if (!profiled) {
    const fixed = passOverheadMs(f, runtimeOverheads(ctx.options));
    forwardMs += fixed.forwardMs;
    backwardMs += fixed.backwardMs;
  }
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
    const { alpha, beta } = allReduceLink(ctx, ring);
    return ringAllReduceSeconds(bytes, ring.length, alpha, beta) + (plan.zero >= 3 ? 2 * ringAllGatherSeconds(bytes, ring.length, alpha, beta) : 0);
  };
  // ZeRO-3 also gathers every parameter for the forward and again for the backward pass.
  const allReduce = ringSeconds(f.batchSplitParams * ctx.bytesPerElement, stageRing) + ringSeconds((f.params - f.batchSplitParams) * ctx.bytesPerElement, shardRing);
  const bucket = ctx.options.allReduceBucketBytes ?? GRADIENT_BUCKET_BYTES;
  const allReduceOverlap = bucket > 0 && gradientBytes > 0 ? Math.max(0, 1 - bucket / gradientBytes) : 0;
  const deviceModel = ctx.cluster.devices[devices[0]].model;
  const measuredUpdate = ctx.options.profile?.optimizerMsPerParam?.[deviceModel];
  // Every layer with weights holds a kernel and a bias: two tensors, each with its own update ops.
  const weightTensors = 2 * f.layers.filter((l) => l.params > 0).length;
  const optimizerMs =
    measuredUpdate !== undefined
      ? (f.params * measuredUpdate + weightTensors * (ctx.options.profile?.optimizerMsPerTensor?.[deviceModel] ?? 0)) * shared
      : ((f.params * UPDATE_FLOPS_PER_PARAM) / (speed * UPDATE_EFFICIENCY)) * 1000;
  // The runtime copies every gradient into its bucket and back before the update, whatever the ring.
  const copy = ctx.options.profile?.gradientCopy;
  const copyMs = copy && gradientBytes > 0 ? (Math.ceil(gradientBytes / (bucket > 0 ? bucket : gradientBytes)) * copy.msPerBucket + gradientBytes * copy.msPerByte) * shared : 0;
  return {
    forwardMs,
    backwardMs,
    sendActivationMs,
    sendGradientMs,
    allReduceMs: allReduce * 1000,
    allReduceOverlap,
    optimizerMs: optimizerMs + copyMs,
    activationBytes: b * f.liveOutBytes * scale,
    tensorParallelMs,
  };
}

/** Milliseconds of one call on `batch` samples: interpolated between timed sizes, else the fitted line. */
function layerMs(measured: NonNullable<NonNullable<CostOptions['profile']>['layers']>[string], batch: number, pass: 'forward' | 'backward'): number {
  const line = () => (pass === 'forward' ? (measured.forwardMsPerCall ?? 0) + batch * measured.forwardMsPerSample : (measured.backwardMsPerCall ?? 0) + batch * measured.backwardMsPerSample);
  const points = measured.points ?? [];
  const at = (p: { forwardMs: number; backwardMs: number }) => (pass === 'forward' ? p.forwardMs : p.backwardMs);
  for (let i = 0; i < points.length; i++) {
    const p = points[i];
    if (p.batch === batch) return at(p);
    const q = points[i + 1];
    if (q && p.batch < batch && batch < q.batch) return at(p) + ((at(q) - at(p)) * (batch - p.batch)) / (q.batch - p.batch);
  }
  return line();
}

/** Id under which a profile times the loss and its gradient (agents/runtime/profileLayers.ts). */
const LOSS_TIMING_ID = '#loss';

/**
 * Measured times of one micro-batch of `b` samples through the stage's layers on this device model,
 * when a profile has all of them; the stage holding the model's output also computes the loss.
 */
function profiledStageMs(ctx: CostContext, f: StageFacts, device: number, b: number): { forward: number; backward: number } | undefined {
  const layers = ctx.options.profile?.layers;
  if (!layers) return undefined;
  const model = ctx.cluster.devices[device].model;
  let forward = 0;
  let backward = 0;
  for (const layer of f.layers) {
    const measured = layers[layer.id];
    if (!measured || measured.device !== model) return undefined;
    forward += layerMs(measured, b, 'forward');
    backward += layerMs(measured, b, 'backward');
  }
  const loss = layers[LOSS_TIMING_ID];
  const output = ctx.model.layers[ctx.model.layers.length - 1];
  if (loss && loss.device === model && f.layers.includes(output)) forward += layerMs(loss, b, 'forward');
  return { forward, backward };
}

/** The measured slow-down of compute on this device's host when the other agents of the plan there compute at once. */
function contention(ctx: CostContext, device: number): number {
  const factors = ctx.options.profile?.contention;
  if (!factors) return 1;
  const host = ctx.cluster.hosts.find((h) => h.devices.includes(device));
  const busy = host ? new Set(ctx.layout.map((p) => p.device).filter((d) => host.devices.includes(d))).size : 1;
  if (busy <= 1) return 1;
  const measured = Object.keys(factors).map(Number).filter((k) => k <= busy);
  return measured.length ? factors[Math.max(...measured)] : 1;
}

/**
 * Per stage of replica r: the share of its busy time (passes and update) during which another agent
 * on its host is busy too — another stage of the replica on the same host, by the simulated timeline,
 * or another replica of any stage there (replicas run the same schedule at the same time).
 */
function overlapShares(ctx: CostContext, r: number, events: TimelineEvent[]): number[] {
  const { plan } = ctx;
  const hostOf = (device: number) => ctx.cluster.hosts.findIndex((h) => h.devices.includes(device));
  const busyKinds = new Set(['forward', 'backward', 'optimizer']);
  const busy = plan.stages.map((_, s) => events.filter((e) => e.stage === s && busyKinds.has(e.kind) && e.endMs > e.startMs).map((e) => [e.startMs, e.endMs] as const));
  return plan.stages.map((_, s) => {
    const device = devicesOfReplica(ctx, s, r)[0];
    const host = hostOf(device);
    // Another replica of a stage (or another shard of this one) on this host: always computing alongside.
    const alongside = ctx.layout.some((p) => hostOf(p.device) === host && (p.replica !== r || (p.stage === s && p.device !== device)));
    if (alongside) return 1;
    const others = plan.stages.flatMap((_, o) => (o !== s && hostOf(devicesOfReplica(ctx, o, r)[0]) === host ? busy[o] : []));
    const own = busy[s].reduce((sum, [a, b]) => sum + b - a, 0);
    if (own <= 0 || others.length === 0) return 0;
    let overlapped = 0;
    for (const [a, b] of busy[s]) overlapped += coveredLength(a, b, others);
    return Math.min(1, overlapped / own);
  });
}

/** Length of [a, b] covered by the union of the intervals. */
function coveredLength(a: number, b: number, intervals: ReadonlyArray<readonly [number, number]>): number {
  const cut = intervals
    .map(([x, y]) => [Math.max(a, x), Math.min(b, y)] as const)
    .filter(([x, y]) => y > x)
    .sort((p, q) => p[0] - q[0]);
  let total = 0;
  let end = a;
  for (const [x, y] of cut) {
    if (y <= end) continue;
    total += y - Math.max(x, end);
    end = y;
  }
  return total;
}

/** α and β of a data-parallel all-reduce ring: the runtime's measured all-reduce inside one host, else its slowest link. */
function allReduceLink(ctx: CostContext, ring: number[]): { alpha: number; beta: number } {
  const measured = ctx.options.profile?.allReduce;
  const oneHost = ctx.cluster.hosts.some((h) => ring.every((d) => h.devices.includes(d)));
  return measured && oneHost && ring.length > 1 ? measured : ringLink(ctx, ring);
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
    const simulate = (shared: number[]) => {
      const costs = plan.stages.map((_, s) => stageCost(ctx, s, r, shared[s]));
      return { costs, sim: simulatePipeline(costs, (perReplica[r] ?? 1) * plan.microBatches, plan.schedule) };
    };
    // Agents sharing a host's cores slow each other down, but only while both compute: a stage's
    // measured slow-down is weighted by the share of its compute that overlaps other agents' compute
    // on its host (found by simulating; a second pass settles the overlaps the slow-down moved).
    const full = plan.stages.map((_, s) => contention(ctx, devicesOfReplica(ctx, s, r)[0]));
    let { costs, sim } = simulate(plan.stages.map(() => 1));
    for (let pass = 0; pass < 2 && full.some((f) => f > 1); pass++) {
      const shared = overlapShares(ctx, r, sim.events).map((share, s) => 1 + (full[s] - 1) * share);
      ({ costs, sim } = simulate(shared));
    }
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
  // The coordinator's step message and the agents' replies (measured round trip; 0 without a profile):
  // a fixed cost of every step, not idle time the schedule causes.
  const fixedOverheadMs = options.profile?.stepOverheadMs ?? 0;
  const stepMs = sim.stepMs + fixedOverheadMs;
  return {
    stepMs,
    samplesPerSec: plan.globalBatch / (stepMs / 1000),
    breakdown: {
      computeMs: slowest.computeMs,
      exposedCommMs: slowest.exposedCommMs,
      // One stage has no pipeline to wait on: what the simulation adds beyond its work is rounding.
      bubbleMs: plan.stages.length > 1 ? Math.max(0, sim.stepMs - slowest.computeMs - slowest.exposedCommMs) : 0,
      fixedOverheadMs,
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
