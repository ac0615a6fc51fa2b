import type { ClusterSpec } from '../cluster/spec.js';
import { costOfPlan } from '../cost/costOfPlan.js';
import type { PlanCost } from '../cost/planCost.js';
import type { ModelGraph } from '../model/graph.js';
import { hasErrors } from '../plan/diagnostics.js';
import type { Plan } from '../plan/plan.js';
import { DEFAULT_OPTIMIZER, DEFAULT_SEED } from '../plan/presets.js';
import { validatePlan } from '../plan/validate.js';
import { buildPlan, knobChoices, type Knobs, type PlanBasics } from './buildPlan.js';
import { deviceView } from './deviceOrder.js';
import { enumerateLayouts } from './enumerateLayouts.js';
import { StepEstimator } from './estimateStep.js';
import { graphFacts } from './graphFacts.js';
import type { Layout } from './layout.js';
import { rationale, type Priced } from './rationale.js';
import type { PlannerResult, Prediction, SuggestOptions, Suggestion } from './types.js';

export type { PlannerResult, Prediction, SuggestOptions, Suggestion } from './types.js';

/** Default global batch: 32 samples per device, a common per-GPU batch for data-parallel training. */
export const SAMPLES_PER_DEVICE = 32;

interface Candidate {
  layout: Layout;
  knobs: Knobs;
  plan: Plan;
  estimateMs: number;
}

interface Scored extends Priced {
  layout: Layout;
}

/** Full pricings per search, by cluster size: each costs O(devices × stages) in costOfPlan. */
const shortlistSize = (devices: number, top: number) => Math.max(3 * top, devices <= 128 ? 48 : devices <= 256 ? 24 : 12);

/** Simpler plans first among equal step times: no recomputation, less ZeRO, fewer micro-batches, GPipe. */
const simplicity = (plan: Plan) =>
  (plan.recompute ? 10_000 : 0) + plan.zero * 1000 + plan.microBatches * 2 + (plan.schedule === '1f1b' ? 1 : 0);
/**
 * Recomputation costs one more forward pass and only saves memory: it can be best only where the same
 * plan without it does not fit, so it is tried there and nowhere else (exact, and the search stays small).
 * One stage gains nothing from it that 1F1B's gradient accumulation does not give without the extra pass.
 */
const recomputeMayHelp = (plan: Plan) => !plan.recompute && plan.stages.length > 1;
const recomputed = (plan: Plan): Plan => ({ ...plan, recompute: true });
/** Step times this close are equal: sums over micro-batches differ only by rounding. */
const fasterBy = (a: number, b: number) => (Math.abs(a - b) <= 1e-9 * Math.max(a, b) ? 0 : a - b);
const byStep = (a: { cost: PlanCost; plan: Plan }, b: { cost: PlanCost; plan: Plan }) => fasterBy(a.cost.stepMs, b.cost.stepMs) || simplicity(a.plan) - simplicity(b.plan);

/**
 * Suggest parallel plans for a model on a cluster, fastest first, each with its predicted cost and a
 * one-line rationale. The search enumerates layouts (data × pipeline × tensor factorizations with
 * DP-balanced stage cuts, placements, sharding modes, virtual nodes) × knobs (micro-batches,
 * schedule, ZeRO stage); a fast estimator ranks every candidate and only a shortlist is priced with
 * costOfPlan. With `exhaustive`, every candidate is priced with costOfPlan, so the first suggestion
 * is the true best of the space. Plans that do not fit in memory or fail validation are never returned.
 */
export function suggestPlans(model: ModelGraph, cluster: ClusterSpec, options: SuggestOptions = {}): PlannerResult {
  const started = performance.now();
  const devices = cluster.devices.length;
  const top = options.top ?? 3;
  const cost = options.cost ?? {};
  const basics: PlanBasics = {
    globalBatch: options.globalBatch ?? SAMPLES_PER_DEVICE * devices,
    optimizer: options.optimizer ?? DEFAULT_OPTIMIZER,
    seed: options.seed ?? DEFAULT_SEED,
  };
  const facts = graphFacts(model);
  const view = deviceView(cluster, cost);
  const layouts = enumerateLayouts({ facts, view, devices, globalBatch: basics.globalBatch });
  const pairs = layouts.flatMap((layout) => knobChoices(layout, basics.globalBatch, options.maxMicroBatches ?? 32).map((knobs) => ({ layout, knobs })));
  const progress = (done: number) => options.onProgress?.(done, pairs.length);

  const price = (layout: Layout, plan: Plan): Scored | undefined => {
    if (hasErrors(validatePlan(plan, model, cluster)) || (options.accept && !options.accept(plan))) return undefined;
    const c = costOfPlan(plan, model, cluster, cost);
    return c.fits ? { plan, cost: c, layout } : undefined;
  };

  const scored: Scored[] = [];
  let evaluated = 0;
  if (options.exhaustive) {
    pairs.forEach(({ layout, knobs }, i) => {
      const plan = buildPlan(model, layout, knobs, basics);
      const s = price(layout, plan) ?? (recomputeMayHelp(plan) ? price(layout, recomputed(plan)) : undefined);
      if (s) scored.push(s);
      evaluated += 1;
      if (i % 32 === 0) progress(i);
    });
  } else {
    const estimator = new StepEstimator(model, cluster, cost, view);
    const fitting: Candidate[] = [];
    pairs.forEach(({ layout, knobs }, i) => {
      let plan = buildPlan(model, layout, knobs, basics);
      let e = estimator.estimate(plan, layout);
      if (!e.fits && recomputeMayHelp(plan)) e = estimator.estimate((plan = recomputed(plan)), layout);
      evaluated += 1;
      if (e.fits && (!options.accept || options.accept(plan))) fitting.push({ layout, knobs, plan, estimateMs: e.stepMs });
      if (i % 256 === 0) progress(i);
    });
    fitting.sort((a, b) => fasterBy(a.estimateMs, b.estimateMs) || simplicity(a.plan) - simplicity(b.plan));
    // Price the best few knob settings of the most promising layouts, plus pure data parallel (the
    // rationale's yardstick), until the shortlist holds enough plans that really fit.
    const perLayout = new Map<Layout, number>();
    const budget = shortlistSize(devices, top);
    let priced = 0;
    for (const c of fitting) {
      if (priced >= budget && scored.length >= top) break;
      const n = perLayout.get(c.layout) ?? 0;
      if (n >= 2) continue;
      perLayout.set(c.layout, n + 1);
      const s = price(c.layout, c.plan);
      priced += 1;
      if (s) scored.push(s);
    }
    const dp = fitting.find((c) => isPureDataParallel(c.layout, devices));
    if (dp && !scored.some((s) => s.plan === dp.plan)) {
      const s = price(dp.layout, dp.plan);
      if (s) scored.push(s);
    }
  }
  progress(pairs.length);

  scored.sort(byStep);
  // Pure data parallel is the yardstick; without it, say whether memory or the batch ruled it out.
  const baseline = scored.find((s) => isPureDataParallel(s.layout, devices)) ?? (pairs.some((c) => isPureDataParallel(c.layout, devices)) ? 'no-fit' : 'no-split');
  const best = new Map<Layout, Scored>();
  for (const s of scored) if (!best.has(s.layout)) best.set(s.layout, s);
  const suggestions: Suggestion[] = [...best.values()].slice(0, top).map((s) => ({
    plan: s.plan,
    rationale: rationale(s, s.layout, baseline, facts, cluster),
    predicted: prediction(s.cost, devices),
  }));
  return { searchMs: performance.now() - started, suggestions, evaluated };
}

/** Data parallel over every device, without sharding or virtual nodes: the rationale's yardstick. */
function isPureDataParallel(layout: Layout, devices: number): boolean {
  const [only] = layout.stages;
  return layout.devicesUsed === devices && layout.stages.length === 1 && only.tensorParallel === 1 && !layout.virtualNodes;
}

/** What the CLI and the studio show: per-device peak memory (0 for a device the plan leaves idle). */
export function prediction(cost: PlanCost, devices: number): Prediction {
  const peak = new Array<number>(devices).fill(0);
  for (const d of cost.devices) peak[d.device] = Math.max(peak[d.device], d.memory.total);
  // The simulator can return -1e-16 for a bubble-free schedule: rounding, not a negative bubble.
  return { stepTimeMs: cost.stepMs, bubbleFraction: Math.max(0, cost.bubbleFraction), peakMemoryBytes: peak, commBytesPerStep: cost.commBytesPerStep };
}
