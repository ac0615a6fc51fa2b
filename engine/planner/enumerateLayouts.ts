import type { LayerSharding } from '../plan/sbp.js';
import { balanceCuts } from './balanceCuts.js';
import { placeStages, type DeviceView } from './deviceOrder.js';
import type { GraphFacts } from './graphFacts.js';
import { apportion, divisors, powersOfTwo, type Layout, type ShardMode, type StageLayout } from './layout.js';

export interface LayoutContext {
  facts: GraphFacts;
  view: DeviceView;
  devices: number;
  globalBatch: number;
}

/** Deepest pipeline the planner tries: beyond this the bubble or the per-stage overheads dominate. */
const MAX_STAGES = 64;

/**
 * Every layout the planner searches: data × pipeline × tensor factorizations of the device count
 * (blocked and interleaved placement), plain data parallel on fewer devices, two ways to use a
 * tensor-parallel group (Whale: shard only the
 * wide output layer, the rest runs batch-split inside the group; Megatron: also split the dense pairs
 * of transformer blocks), and virtual-node splits on mixed clusters. Stage cuts are balanced once per
 * layout by dynamic programming; the exhaustive search and the pruned one see the same list.
 */
export function enumerateLayouts(ctx: LayoutContext): Layout[] {
  const out: Layout[] = [];
  for (const { t, mode, p, d } of shapes(ctx)) {
    // Interleaving only differs from blocking when the devices span hosts (links differ).
    const spansHosts = ctx.view.hostSize < ctx.devices;
    const placements: Array<'blocked' | 'interleaved'> = p > 1 && d > 1 && spansHosts ? ['blocked', 'interleaved'] : ['blocked'];
    for (const placement of placements) {
      const groups = placeStages(ctx.view.order, p, d, t, placement);
      for (const vn of virtualNodeChoices(ctx, groups, d, t)) {
        const layout = uniformLayout(ctx, groups, d, t, mode, placement, vn);
        if (layout) out.push(layout);
      }
    }
  }
  return [...out, ...fewerDevices(ctx)];
}

/**
 * Plain data parallel on 1, 2, 4, … of the devices (the fastest first): for a small model the fixed
 * costs of each extra device — all-reduce latency, messages, per-call overheads — outweigh the compute
 * it takes over, and an expert would leave devices idle rather than pipeline a thousand weights.
 */
function fewerDevices(ctx: LayoutContext): Layout[] {
  const out: Layout[] = [];
  for (let used = 1; used < ctx.devices; used *= 2) {
    if (ctx.globalBatch % used !== 0) continue;
    const groups = placeStages(ctx.view.order, 1, used, 1, 'blocked');
    const layout = uniformLayout({ ...ctx, devices: used }, groups, used, 1, 'none', 'blocked', undefined);
    if (layout) out.push(layout);
  }
  return out;
}

/** Factorizations p · d · t of the device count, with t inside a host and a sharding mode per t. */
function shapes(ctx: LayoutContext): Array<{ t: number; mode: ShardMode; p: number; d: number }> {
  const { facts, view, devices: n } = ctx;
  const modes: ShardMode[] = [];
  if (facts.wideOutput >= 0) modes.push('output');
  if (facts.denseChains.length > 0) modes.push('megatron');
  const out: Array<{ t: number; mode: ShardMode; p: number; d: number }> = [];
  for (const t of powersOfTwo(view.hostSize).filter((k) => n % k === 0)) {
    for (const mode of t === 1 ? (['none'] as const) : modes) {
      for (const p of divisors(n / t)) {
        if (p <= MAX_STAGES && p <= facts.cuts.length + 1) out.push({ t, mode, p, d: n / (p * t) });
      }
    }
  }
  return out;
}

/** Relative speed of each replica across the stages: its slowest device anywhere in the pipeline. */
function replicaSpeeds(view: DeviceView, groups: number[][], d: number, t: number): number[] {
  return Array.from({ length: d }, (_, r) => Math.min(...groups.flatMap((g) => g.slice(r * t, (r + 1) * t).map((dev) => view.speed[dev]))));
}

/** No virtual nodes, and on a mixed cluster also 2, 4 or 8 per replica on average, shared by speed. */
function virtualNodeChoices(ctx: LayoutContext, groups: number[][], d: number, t: number): Array<Layout['virtualNodes']> {
  const choices: Array<Layout['virtualNodes']> = [undefined];
  if (ctx.view.homogeneous || d === 1) return choices;
  const speeds = replicaSpeeds(ctx.view, groups, d, t);
  if (speeds.every((s) => s === speeds[0])) return choices;
  for (const g of [2, 4, 8]) {
    const total = d * g;
    if (ctx.globalBatch % total !== 0) continue;
    const perReplica = apportion(total, speeds);
    // An even share (too few virtual nodes to tell the speeds apart) is plain data parallelism again.
    if (perReplica.some((v) => v !== perReplica[0])) choices.push({ total, perReplica });
  }
  return choices;
}

/**
 * Layers whose weights a stage of tensor degree t splits: the wide output layer column-parallel over
 * the classes (Whale), and in Megatron mode also each dense pair, column- then row-parallel, so the
 * hidden activation stays split and one all-reduce ends the pair.
 */
function shardingFor(facts: GraphFacts, from: number, to: number, t: number, mode: ShardMode): Record<string, LayerSharding> {
  const sharding: Record<string, LayerSharding> = {};
  if (t === 1 || mode === 'none') return sharding;
  const units = (i: number) => {
    const spec = facts.layers[i].spec;
    return spec.kind === 'dense' || spec.kind === 'denseNd' ? spec.units : 0;
  };
  for (const [a, b] of mode === 'megatron' ? facts.denseChains : []) {
    if (a >= from && b < to && units(a) % t === 0) {
      sharding[facts.layers[a].id] = { weight: 'S(1)' };
      sharding[facts.layers[b].id] = { weight: 'S(0)' };
    }
  }
  const w = facts.wideOutput;
  if (w >= from && w < to && units(w) % t === 0) sharding[facts.layers[w].id] = { weight: 'S(1)' };
  return sharding;
}

function uniformLayout(ctx: LayoutContext, groups: number[][], d: number, t: number, mode: ShardMode, placement: Layout['placement'], vn: Layout['virtualNodes']): Layout | undefined {
  const { facts, view } = ctx;
  // A stage's rate: how fast its slowest replica gets through its share of virtual nodes.
  const rates = groups.map((g) => {
    let worst = 0;
    for (let r = 0; r < d; r++) {
      const speed = Math.min(...g.slice(r * t, (r + 1) * t).map((dev) => view.speed[dev]));
      worst = Math.max(worst, (vn ? vn.perReplica[r] / vn.total : 1 / d) / speed);
    }
    return 1 / worst;
  });
  // Every stage has the same tensor degree, so per-layer FLOPs compare stages fairly.
  const bounds = balanceCuts(facts.work, facts.cuts, rates);
  if (!bounds) return undefined;
  const stages: StageLayout[] = groups.map((devices, s) => ({ from: bounds[s], to: bounds[s + 1], dataParallel: d, tensorParallel: t, devices }));
  const sharding: Record<string, LayerSharding> = {};
  for (const st of stages) {
    const own = shardingFor(facts, st.from, st.to, t, mode);
    // A tensor-parallel stage with nothing to split is only data parallel under another name.
    if (t > 1 && Object.keys(own).length === 0) return undefined;
    Object.assign(sharding, own);
  }
  return { shardMode: mode, placement, stages, sharding, ...(vn ? { virtualNodes: vn } : {}), devicesUsed: ctx.devices };
}
