import type { ClusterSpec } from '../../../engine/cluster/spec';
import type { ModelGraph } from '../../../engine/model/graph';
import type { Diagnostic } from '../../../engine/plan/diagnostics';
import { hasErrors } from '../../../engine/plan/diagnostics';
import { agentsNeeded } from '../../../engine/plan/plan';
import type { Plan } from '../../../engine/plan/plan';
import { validatePlan } from '../../../engine/plan/validate';
import { executionSupport } from '../../../engine/plan/executionSupport';
import { predictPlan } from '../../../engine/cost/predictPlan';
import type { PlanCost } from '../../../engine/cost/planCost';
import { useEditor } from '../editor/editorStore';
import { formatBytes } from '../format';
import { stagePredictions } from './stagePredictions';
import { clusterSpec } from './clusters';
import type { ClusterChoice } from './clusters';
import { useStudio } from './studioStore';

export interface PlanState {
  plan?: Plan;
  diagnostics: Diagnostic[];
  /** Layer id → pipeline stage index. */
  stageOf: Map<string, number>;
  /** The cost model's prediction (datasheet speeds until a run calibrates them). */
  cost?: PlanCost;
  cluster?: ClusterSpec;
  /** Set when the plan was priced on more local agents than are set (it needs them to run). */
  pricedOnAgents?: number;
  /** Diagnostics by what they are about, for showing them inline. */
  byStage: Map<number, Diagnostic[]>;
  byLayer: Map<string, Diagnostic[]>;
  byField: Map<string, Diagnostic[]>;
}

/** One error per stage whose most loaded device would run out of memory (validation does not price memory). */
function memoryFindings(cost: PlanCost): Diagnostic[] {
  return stagePredictions(cost).flatMap((p, stage) =>
    p.fits
      ? []
      : [
          {
            severity: 'error' as const,
            code: 'out-of-memory',
            message: `Stage ${stage} needs ${formatBytes(p.memoryBytes)} on a device that has ${formatBytes(p.capacityBytes)}.`,
            where: { stage },
            hint: 'Split it into more stages, add ZeRO or recomputation, use fewer micro-batches, or pick a cluster with more memory.',
          },
        ],
  );
}

/** executionSupport's findings: what the agents cannot run yet, which the cost model can still price. */
const EXECUTION_CODES = new Set([
  'schedule-unsupported', 'zero-unsupported', 'async-zero-unsupported', 'async-clipping-unsupported', 'unequal-data-parallel', 'tensor-unsupported',
  // An opened model's layers and placement (executionSupport with the model).
  'layer-not-executable', 'tensor-layer-unsupported', 'shared-layer-split',
]);

const EMPTY: PlanState = { diagnostics: [], stageOf: new Map(), byStage: new Map(), byLayer: new Map(), byField: new Map() };

function push<K>(map: Map<K, Diagnostic[]>, key: K, d: Diagnostic): void {
  const list = map.get(key);
  if (list) list.push(d);
  else map.set(key, [d]);
}

export function stageMap(plan: Plan | undefined): Map<string, number> {
  const stageOf = new Map<string, number>();
  plan?.stages.forEach((stage, s) => stage.layers.forEach((id) => stageOf.set(id, s)));
  return stageOf;
}

/** Judge and price a plan on its cluster with the pure engine (a few milliseconds for zoo models). */
export function derivePlan(model: ModelGraph | undefined, plan: Plan | undefined, choice: ClusterChoice, agents: number): PlanState {
  if (!model || !plan || plan.model !== model.name) return EMPTY;
  const cluster = clusterSpec(choice, agents);
  const diagnostics = [...validatePlan(plan, model, cluster), ...(choice === 'local' ? executionSupport(plan, model.source ? model : undefined) : [])];
  // On this machine the agent count is a setting: price the plan on the agents it needs, and let the
  // too-few-agents error say to raise the setting.
  const needed = agentsNeeded(plan);
  const pricedOnAgents = choice === 'local' && needed > agents && needed <= 256 ? needed : undefined;
  const pricing = pricedOnAgents ? clusterSpec('local', pricedOnAgents) : cluster;
  // Price only what validation accepts: the cost model assumes a well-formed plan.
  const priceable = pricing === cluster ? !hasErrors(diagnostics.filter((d) => !EXECUTION_CODES.has(d.code))) : !hasErrors(validatePlan(plan, model, pricing));
  const cost = priceable ? predictPlan(plan, model, pricing).cost : undefined;
  if (cost) diagnostics.push(...memoryFindings(cost));
  const state: PlanState = { plan, diagnostics, stageOf: stageMap(plan), cost, cluster, pricedOnAgents: cost ? pricedOnAgents : undefined, byStage: new Map(), byLayer: new Map(), byField: new Map() };
  for (const d of diagnostics) {
    if (d.where.layer !== undefined) push(state.byLayer, d.where.layer, d);
    else if (d.where.stage !== undefined) push(state.byStage, d.where.stage, d);
    if (d.where.field !== undefined && d.where.layer === undefined) push(state.byField, d.where.field, d);
  }
  return state;
}


let last: { model?: ModelGraph; plan?: Plan; choice: ClusterChoice; agents: number; spec?: ClusterSpec; state: PlanState } | undefined;

/** derivePlan, remembered for the last inputs so every view of one render shares one pricing. */
export function currentPlanState(model: ModelGraph | undefined, plan: Plan | undefined, choice: ClusterChoice, agents: number): PlanState {
  // The spec too: a stored cluster's changes when a test measures its hosts (store/clusters.ts).
  const spec = model && plan && plan.model === model.name ? clusterSpec(choice, agents) : undefined;
  if (last && last.model === model && last.plan === plan && last.choice === choice && last.agents === agents && last.spec === spec) return last.state;
  const state = derivePlan(model, plan, choice, agents);
  last = { model, plan, choice, agents, spec, state };
  return state;
}

/** The plan the studio would run: the edited plan on the open model, judged and priced on its cluster. */
export function usePlan(): PlanState {
  const model = useStudio((s) => s.model);
  const choice = useStudio((s) => s.cluster);
  const agents = useStudio((s) => s.agents);
  const plan = useEditor((s) => s.plan);
  return currentPlanState(model, plan, choice, agents);
}
