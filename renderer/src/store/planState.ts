import { useMemo } from 'react';
import type { ModelGraph } from '../../../engine/model/graph';
import type { Diagnostic } from '../../../engine/plan/diagnostics';
import type { Plan } from '../../../engine/plan/plan';
import { presetPlan } from '../../../engine/plan/presets';
import { validatePlan } from '../../../engine/plan/validate';
import { executionSupport } from '../../../engine/plan/executionSupport';
import { localClusterSpec } from '../../../engine/cluster/cluster';
import { costOfPlan } from '../../../engine/cost/costOfPlan';
import type { PlanCost } from '../../../engine/cost/planCost';
import { useStudio } from './studioStore';

export interface PlanState {
  plan?: Plan;
  diagnostics: Diagnostic[];
  /** Layer id → pipeline stage index. */
  stageOf: Map<string, number>;
  /** The cost model's prediction on "This machine" (datasheet speeds until a run calibrates them). */
  cost?: PlanCost;
}

/** The plan the studio would run: the chosen preset on the open model, checked by the pure engine. */
export function derivePlan(model: ModelGraph | undefined, preset: string, agents: number): PlanState {
  if (!model) return { diagnostics: [], stageOf: new Map() };
  let plan: Plan;
  try {
    plan = presetPlan(model, preset);
  } catch (error) {
    const message = error instanceof Error ? error.message : String(error);
    return { diagnostics: [{ severity: 'error', code: 'preset-invalid', message, where: { field: 'stages' }, hint: 'Pick a preset with fewer pipeline stages.' }], stageOf: new Map() };
  }
  const stageOf = new Map<string, number>();
  plan.stages.forEach((stage, s) => stage.layers.forEach((id) => stageOf.set(id, s)));
  const cluster = localClusterSpec(agents);
  const diagnostics = [...validatePlan(plan, model, cluster), ...executionSupport(plan)];
  // Price only what validation accepts: the cost model assumes a well-formed plan.
  const valid = validatePlan(plan, model, cluster).every((d) => d.severity !== 'error');
  return { plan, diagnostics, stageOf, cost: valid ? costOfPlan(plan, model, cluster) : undefined };
}

export function usePlan(): PlanState {
  const model = useStudio((s) => s.model);
  const preset = useStudio((s) => s.preset);
  const agents = useStudio((s) => s.agents);
  return useMemo(() => derivePlan(model, preset, agents), [model, preset, agents]);
}
