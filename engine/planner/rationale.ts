import type { ClusterSpec } from '../cluster/spec.js';
import type { PlanCost } from '../cost/planCost.js';
import type { Plan } from '../plan/plan.js';
import type { GraphFacts } from './graphFacts.js';
import type { Layout } from './layout.js';

/** A priced plan the rationale can compare against: pure data parallel, or why there is none. */
export interface Priced {
  plan: Plan;
  cost: PlanCost;
}

const times = (x: number) => `${x >= 10 ? x.toFixed(0) : x.toFixed(1)}×`;
const percent = (x: number) => `${Math.round(x * 100)}%`;
const ms = (x: number) => (x >= 10 ? x.toFixed(0) : x.toFixed(1));

/** Bytes per step that cross between hosts: the traffic slow links carry. */
export function interHostBytes(cost: PlanCost, cluster: ClusterSpec): number {
  return cost.links.reduce((sum, l) => sum + (cluster.devices[l.from].hostIndex !== cluster.devices[l.to].hostIndex ? l.bytes : 0), 0);
}

/**
 * One line on why a plan wins: the cost that dominates it or that it removes, with the number that
 * says so, then the memory and balance measures it needed.
 */
export function rationale(chosen: Priced, layout: Layout, baseline: Priced | 'no-fit' | 'no-split', facts: GraphFacts, cluster: ClusterSpec): string {
  const { plan, cost } = chosen;
  const p = plan.stages.length;
  const d = plan.stages[0].dataParallel;
  const t = plan.stages[0].tensorParallel;
  const speedup = typeof baseline === 'object' ? baseline.cost.stepMs / cost.stepMs : undefined;
  const missing = baseline === 'no-fit' ? ' (pure data parallel does not fit in memory)' : ' (the global batch does not split over every device)';
  const vsDp = speedup === undefined ? missing : speedup > 1.005 ? ` (${times(speedup)} faster than pure data parallel)` : '';
  let head: string;
  if (layout.devicesUsed < cluster.devices.length) {
    const on = d === 1 ? 'one device' : `data parallel over ${d} devices`;
    const why = 'more would add all-reduce latency, messages and per-call overheads than the compute they take over';
    head = `${on} of ${cluster.devices.length}: ${why}${vsDp}`;
  } else if (layout.shardMode === 'output') {
    const wide = facts.layers[facts.wideOutput];
    const units = wide.spec.kind === 'dense' || wide.spec.kind === 'denseNd' ? wide.spec.units : 0;
    const classes = units >= 1000 ? `${Math.round(units / 1000)}k` : String(units);
    head = `the ${classes}-class layer holds ${percent(wide.params / facts.totalParams)} of the weights and its all-reduce dominates: shard it over ${t} devices in a host, the rest data parallel over ${d * t * p}${vsDp}`;
  } else if (layout.shardMode === 'megatron') {
    head = `Megatron-style sharding: dense layers split over ${t} devices in a host, ${p > 1 ? `pipeline ${p} × ` : ''}data ${d}${vsDp}`;
  } else if (p > 1) {
    // What the pipeline removes: each stage all-reduces only its own layers' gradients, and fewer
    // bytes need cross hosts when a stage's replicas share hosts.
    const wins: string[] = [];
    if (typeof baseline === 'object') {
      const [before, after] = [baseline.cost.breakdown.exposedCommMs, cost.breakdown.exposedCommMs];
      if (before > 1.2 * after && before - after > 0.05 * baseline.cost.stepMs) wins.push(`exposed communication ${ms(before)} → ${ms(after)} ms`);
      const [hostsBefore, hostsAfter] = [interHostBytes(baseline.cost, cluster), interHostBytes(cost, cluster)];
      if (hostsAfter > 0 && hostsBefore / hostsAfter > 1.05) wins.push(`inter-host traffic ${times(hostsBefore / hostsAfter)}`);
    }
    const cuts = wins.length ? ` cuts ${wins.join(' and ')}` : '';
    if (speedup !== undefined && speedup < 0.995) {
      head = `pipeline ${p} × data ${d}${cuts}, but its bubble (${percent(cost.bubbleFraction)}) leaves it ${percent(1 / speedup - 1)} slower than pure data parallel`;
    } else {
      head = `pipeline ${p} × data ${d}${cuts || ' balances compute and communication'}${vsDp}`;
    }
  } else {
    const share = cost.breakdown.exposedCommMs / cost.stepMs;
    head = share < 0.25 ? `compute-bound: data parallel over ${d} devices (exposed all-reduce ${percent(share)} of the step)` : `the all-reduce is ${percent(share)} of the step, but no pipeline or sharding beats data parallel over ${d} devices`;
    // Only virtual nodes set this plan apart from plain data parallel: say what they gained.
    if (speedup !== undefined && speedup > 1.005) head += ` (${times(speedup)} faster than equal shares per device)`;
  }
  const extras: string[] = [];
  if (plan.zero > 0) extras.push(`ZeRO-${plan.zero} to fit memory`);
  if (plan.recompute) extras.push('recomputes each stage\'s forward in its backward pass to fit activations');
  if (plan.schedule === '1f1b') extras.push(p > 1 ? `1F1B holds at most ${p} micro-batches of activations` : `gradient accumulation over ${plan.microBatches} micro-batches to fit activations`);
  const vn = plan.virtualNodes?.perReplica;
  if (vn) extras.push(`virtual nodes ${Math.max(...vn)}:${Math.min(...vn)} by device speed`);
  return [head, ...extras].join('; ');
}
