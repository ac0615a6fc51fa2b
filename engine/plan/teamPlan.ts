import { localClusterSpec } from '../cluster/cluster.js';
import { costOfPlan } from '../cost/costOfPlan.js';
import type { CostOptions } from '../cost/planCost.js';
import type { ModelGraph } from '../model/graph.js';
import { devicesPerReplica, planForDevices, planOnFewerDevices } from './elastic.js';
import { executionSupport } from './executionSupport.js';
import { LIMITS } from './limits.js';
import { agentsNeeded, type Plan } from './plan.js';
import { balancedStages } from './presets.js';
import { validatePlan } from './validate.js';
import { virtualNodeTotal } from './virtualNodes.js';

/** The plan for a team of agents, and why some of them wait (null when it uses them all). */
export interface TeamPlan {
  plan: Plan;
  /** Why `agents − agentsNeeded(plan)` agents wait, said for the user; null when every agent trains. */
  waitingReason: string | null;
}

/**
 * The plan for every agent of an elastic job: after a loss or a resize the new generation uses all
 * live agents, as the planner would lay them out, with the job's global batch, V virtual nodes,
 * micro-batches, schedule and hyperparameters unchanged (VirtualFlow), so what is learnt does not
 * change. The shapes that use exactly `agents` are: the job's own stages (with their tensor-parallel
 * degrees and sharding) replicated agents / devicesPerReplica times, and every re-cut of the model
 * into p stages of whole layers replicated agents / p times — never more replicas than V, since each
 * replica runs at least one virtual node. The job's own stages win when they use everyone (the user
 * chose them; the cost model here only has a uniform stand-in for the cluster); otherwise the cost
 * model's fastest re-cut the agents can execute (on a uniform cluster of that many devices,
 * calibrated by `cost` when given; ties to fewer stages). When no shape uses everyone (more agents than V × the
 * model's layers, a model whose shared layers forbid some cuts), the largest team that fits trains and
 * the rest wait, with the reason.
 */
export function planTeam(base: Plan, model: ModelGraph, agents: number, cost: CostOptions = {}): TeamPlan {
  if (agents < 1) throw new Error('No agent is left to run the job on.');
  for (let n = agents; n >= 1; n--) {
    const own = ownStagesFor(base, n);
    const best = own && runnable(own, model) ? own : fastest(recutsFor(base, model, n), model, n, cost);
    if (best) return { plan: best, waitingReason: n === agents ? null : whyFewer(base, model, agents, n) };
  }
  // Nothing the agents can execute (should not happen: one stage on one agent always is); the old rule.
  const plan = devicesPerReplica(base) <= agents ? planForDevices(base, agents) : planOnFewerDevices(base, model, agents);
  return { plan, waitingReason: agentsNeeded(plan) < agents ? whyFewer(base, model, agents, agentsNeeded(plan)) : null };
}

/** The plan for `agents` agents (planTeam's, without the reason): restarts and resizes use the same rule. */
export function replanTeam(base: Plan, model: ModelGraph, agents: number): Plan {
  return planTeam(base, model, agents).plan;
}

/** The job's own stages replicated onto exactly `n` agents, when they divide. */
function ownStagesFor(base: Plan, n: number): Plan | undefined {
  const perReplica = devicesPerReplica(base);
  return n % perReplica === 0 && n / perReplica <= virtualNodeTotal(base) ? planForDevices(base, n) : undefined;
}

/** Every re-cut of the model into stages of whole layers that uses exactly `n` agents, keeping the job's batch and virtual nodes. */
function recutsFor(base: Plan, model: ModelGraph, n: number): Plan[] {
  const total = virtualNodeTotal(base);
  const out: Plan[] = [];
  for (let stages = 1; stages <= Math.min(n, model.layers.length, LIMITS.stages); stages++) {
    const replicas = n / stages;
    if (!Number.isInteger(replicas) || replicas > total) continue;
    let cut: string[][];
    try {
      cut = balancedStages(model, stages);
    } catch {
      continue; // a cut that would separate the calls of a shared layer
    }
    out.push({
      ...base,
      stages: cut.map((layers) => ({ layers, dataParallel: replicas, tensorParallel: 1 })),
      sharding: {},
      // ZeRO shards over replicas: with one replica there is nothing to shard.
      zero: replicas > 1 ? base.zero : 0,
      virtualNodes: { total, perReplica: evenSplit(total, replicas) },
    });
  }
  return out;
}

/** Whether the agents can execute `plan` (validation and the runtime's support, errors only). */
function runnable(plan: Plan, model: ModelGraph): boolean {
  return ![...validatePlan(plan, model), ...executionSupport(plan, model)].some((d) => d.severity === 'error');
}

function evenSplit(total: number, replicas: number): number[] {
  return Array.from({ length: replicas }, (_, r) => Math.floor(total / replicas) + (r < total % replicas ? 1 : 0));
}

/** The fastest shape the agents can run, by the cost model; undefined when none can run. */
function fastest(shapes: Plan[], model: ModelGraph, n: number, cost: CostOptions): Plan | undefined {
  const cluster = localClusterSpec(n);
  const candidates = shapes.filter((p) => runnable(p, model));
  if (candidates.length <= 1) return candidates[0];
  const priced = candidates.map((plan, order) => {
    const c = costOfPlan(plan, model, cluster, cost);
    return { plan, order, fits: c.fits, stepMs: c.stepMs };
  });
  // Plans that fit in memory first; then the step time, equal within rounding; then the order above.
  priced.sort((a, b) => Number(b.fits) - Number(a.fits) || (Math.abs(a.stepMs - b.stepMs) <= 1e-9 * Math.max(a.stepMs, b.stepMs) ? 0 : a.stepMs - b.stepMs) || a.order - b.order);
  return priced[0].plan;
}

function whyFewer(base: Plan, model: ModelGraph, agents: number, n: number): string {
  const total = virtualNodeTotal(base);
  const stages = Math.min(model.layers.length, LIMITS.stages);
  return `no layout of the job uses all ${agents} agents — a layout is p stages (at most ${stages}, the layers of "${model.name}") × r replicas (at most ${total}, one per virtual node of the global batch) — so ${n} train and ${agents - n} wait, taking part when the team changes again. A plan with more virtual nodes (virtualNodes.total) trains on more agents`;
}
