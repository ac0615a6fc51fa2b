import type { ClusterSpec } from '../cluster/spec.js';
import { p2pSeconds, ringAllGatherSeconds, ringAllReduceSeconds } from '../cost/collectives.js';
import { link, ringLink, type CostContext } from '../cost/costContext.js';
import { deviceMemory } from '../cost/deviceMemory.js';
import type { CostOptions } from '../cost/planCost.js';
import { NO_OVERHEADS, passOverheadMs, runtimeOverheads, type RuntimeOverheads } from '../cost/runtimeOverheads.js';
import { stageFacts, type GroupCollective, type StageFacts } from '../cost/stageFacts.js';
import type { ModelGraph } from '../model/graph.js';
import { microBatchSize } from '../plan/placement.js';
import type { Plan } from '../plan/plan.js';
import { virtualNodesPerReplica } from '../plan/virtualNodes.js';
import { simulatePipeline, type StageCost } from '../sim/simulatePipeline.js';
import type { DeviceView } from './deviceOrder.js';
import type { Layout } from './layout.js';
import { GRADIENT_BUCKET_BYTES } from '../plan/runtimeConstants.js';

export interface Estimate {
  stepMs: number;
  fits: boolean;
}

type AlphaBeta = { alpha: number; beta: number };

/** What one replica's pipeline sees, stage by stage: its devices' speed and the links it uses. */
interface ReplicaView {
  replica: number;
  stages: Array<{ speed: number; group: AlphaBeta; next?: AlphaBeta; prev?: AlphaBeta }>;
}

/** Per-layout facts that no knob changes, computed once per layout. */
interface LayoutLinks {
  /** Replicas with distinct speeds, links or virtual-node counts; the others simulate the same. */
  replicas: ReplicaView[];
  /** Per stage: the ring over all its devices, and the ring over shard 0 of every replica. */
  rings: Array<{ all: AlphaBeta; shard: AlphaBeta; allSize: number; shardSize: number }>;
  /** Per stage: the device with the least memory. */
  smallest: number[];
}

/** Same constants as costOfPlan's optimizer-update term. */
const UPDATE_FLOPS_PER_PARAM = 10;
const UPDATE_EFFICIENCY = 0.05;

/**
 * A fast stand-in for costOfPlan, used to rank thousands of candidates before the few best are
 * priced in full. It follows costOfPlan's formulas but (1) computes each stage's facts once per
 * (layer range, tensor degree, sharding mode), (2) simulates one pipeline per distinct kind of
 * replica instead of one per replica, and (3) checks memory on the smallest device of each stage
 * rather than on every device. On a 1,024-device cluster that is ~100× cheaper.
 */
export class StepEstimator {
  private readonly facts = new Map<string, StageFacts>();
  private readonly links = new Map<Layout, LayoutLinks>();
  private readonly bytesPerElement: number;
  private readonly overheads: RuntimeOverheads;

  constructor(
    private readonly model: ModelGraph,
    private readonly cluster: ClusterSpec,
    private readonly options: CostOptions,
    private readonly view: DeviceView,
  ) {
    this.bytesPerElement = options.bytesPerElement ?? (options.precision === 'mixed' ? 2 : 4);
    // Measured layer times include the per-call costs; costOfPlan adds these only without them.
    this.overheads = options.profile?.layers ? NO_OVERHEADS : runtimeOverheads(options);
  }

  estimate(plan: Plan, layout: Layout): Estimate {
    const facts = layout.stages.map((st, s) => {
      const key = `${st.from}:${st.to}:${st.tensorParallel}:${layout.shardMode}`;
      let f = this.facts.get(key);
      if (!f) this.facts.set(key, (f = stageFacts(this.model, plan, s)));
      return f;
    });
    const ctx: CostContext = {
      plan,
      model: this.model,
      cluster: this.cluster,
      options: this.options,
      facts,
      layout: [],
      microBatch: microBatchSize(plan),
      scale: this.bytesPerElement / 4,
      bytesPerElement: this.bytesPerElement,
    };
    const links = this.linksOf(ctx, layout);
    const fits = layout.stages.every((_, s) => deviceMemory(ctx, { device: links.smallest[s], rank: 0, stage: s, replica: 0, shard: 0 }).fits);
    const allReduce = layout.stages.map((_, s) => this.allReduce(ctx, links, s));
    const perReplica = virtualNodesPerReplica(plan);
    let stepMs = 0;
    for (const replica of links.replicas) {
      const costs = replica.stages.map((view, s) => this.stageCost(ctx, s, view, layout.stages[s].tensorParallel, allReduce[s]));
      stepMs = Math.max(stepMs, simulatePipeline(costs, (perReplica[replica.replica] ?? 1) * plan.microBatches, plan.schedule).stepMs);
    }
    return { stepMs, fits };
  }

  private linksOf(ctx: CostContext, layout: Layout): LayoutLinks {
    const known = this.links.get(layout);
    if (known) return known;
    const last = layout.stages.length - 1;
    const seen = new Set<string>();
    const replicas: ReplicaView[] = [];
    for (let r = 0; r < layout.stages[0].dataParallel; r++) {
      const stages = layout.stages.map((_, s) => {
        const devices = this.replicaDevices(layout, s, r);
        return {
          speed: Math.min(...devices.map((d) => this.view.speed[d])),
          group: devices.length > 1 ? ringLink(ctx, devices) : { alpha: 0, beta: Infinity },
          ...(s < last ? { next: link(ctx, devices[0], this.replicaDevices(layout, s + 1, r)[0]) } : {}),
          ...(s > 0 ? { prev: link(ctx, devices[0], this.replicaDevices(layout, s - 1, r)[0]) } : {}),
        };
      });
      const key = `${layout.virtualNodes?.perReplica[r] ?? 1}|${JSON.stringify(stages)}`;
      if (seen.has(key)) continue;
      seen.add(key);
      replicas.push({ replica: r, stages });
    }
    const rings = layout.stages.map((st) => {
      const shard = st.devices.filter((_, i) => i % st.tensorParallel === 0);
      return { all: ringLink(ctx, st.devices), shard: ringLink(ctx, shard), allSize: st.devices.length, shardSize: shard.length };
    });
    const smallest = layout.stages.map((st) => st.devices.reduce((a, b) => (this.view.memory[b] < this.view.memory[a] ? b : a)));
    const made = { replicas, rings, smallest };
    this.links.set(layout, made);
    return made;
  }

  private replicaDevices(layout: Layout, s: number, r: number): number[] {
    const st = layout.stages[s];
    const rr = r % st.dataParallel;
    return st.devices.slice(rr * st.tensorParallel, (rr + 1) * st.tensorParallel);
  }

  /** Gradient all-reduce of stage s: batch-split layers over every device, sharded ones per shard ring. */
  private allReduce(ctx: CostContext, links: LayoutLinks, s: number): { ms: number; overlap: number } {
    const f = ctx.facts[s];
    const rings = links.rings[s];
    const ring = (bytes: number, n: number, { alpha, beta }: AlphaBeta) =>
      ringAllReduceSeconds(bytes, n, alpha, beta) + (ctx.plan.zero >= 3 ? 2 * ringAllGatherSeconds(bytes, n, alpha, beta) : 0);
    const seconds = ring(f.batchSplitParams * this.bytesPerElement, rings.allSize, rings.all) + ring((f.params - f.batchSplitParams) * this.bytesPerElement, rings.shardSize, rings.shard);
    const bucket = this.options.allReduceBucketBytes ?? GRADIENT_BUCKET_BYTES;
    const gradientBytes = f.params * this.bytesPerElement;
    return { ms: seconds * 1000, overlap: bucket > 0 && gradientBytes > 0 ? Math.max(0, 1 - bucket / gradientBytes) : 0 };
  }

  private stageCost(ctx: CostContext, s: number, view: ReplicaView['stages'][number], t: number, allReduce: { ms: number; overlap: number }): StageCost {
    const f = ctx.facts[s];
    const b = ctx.microBatch;
    const speed = view.speed;
    const fixed = passOverheadMs(f, this.overheads);
    let forwardMs = ((b * f.forwardFlops) / speed) * 1000 + fixed.forwardMs;
    let backwardMs = ((b * f.backwardFlops) / speed) * 1000 + fixed.backwardMs;
    if (ctx.plan.recompute) backwardMs += forwardMs;
    if (t > 1) {
      const { alpha, beta } = view.group;
      const seconds = (list: GroupCollective[]) =>
        list.reduce((sum, c) => sum + (c.kind === 'allReduce' ? ringAllReduceSeconds : ringAllGatherSeconds)(b * c.bytes * ctx.scale, t, alpha, beta), 0);
      forwardMs += seconds(f.forwardCollectives) * 1000;
      backwardMs += seconds(f.backwardCollectives) * 1000;
    }
    const send = (bytes: number, l: AlphaBeta | undefined) => (l ? p2pSeconds(b * bytes * ctx.scale, l.alpha, l.beta) * 1000 : 0);
    return {
      forwardMs,
      backwardMs,
      sendActivationMs: send(f.liveOutBytes, view.next),
      sendGradientMs: send(f.liveInBytes, view.prev),
      allReduceMs: allReduce.ms,
      allReduceOverlap: allReduce.overlap,
      optimizerMs: ((f.params * UPDATE_FLOPS_PER_PARAM) / (speed * UPDATE_EFFICIENCY)) * 1000,
    };
  }
}
