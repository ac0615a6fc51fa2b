import type { ClusterSpec } from '../cluster/spec.js';
import type { ModelGraph } from '../model/graph.js';
import type { Plan } from '../plan/plan.js';
import type { JobProfile } from '../protocol/profile.js';
import { calibrate } from './calibrate.js';
import { costOfPlan } from './costOfPlan.js';
import type { PlanCost } from './planCost.js';

export interface PlanPrediction {
  /** At datasheet speeds (or the cluster's measured ones). */
  cost: PlanCost;
  /** Calibrated by what a run's agents measured, when a profile was given and the cost model can use it. */
  calibrated?: PlanCost;
}

/**
 * What the studio shows as a plan's prediction: the plan editor, the Monitor and the Runs view all
 * price through here, so one plan gets one number wherever it is shown. The runtime's own constants
 * (engine/plan/runtimeConstants.ts) are the cost model's defaults. Throws when the cost model cannot
 * price the plan; a profile it cannot use (an older format, another plan's) leaves `calibrated` out.
 */
export function predictPlan(plan: Plan, model: ModelGraph, cluster: ClusterSpec, profile?: JobProfile): PlanPrediction {
  const cost = costOfPlan(plan, model, cluster);
  if (!profile) return { cost };
  try {
    return { cost, calibrated: costOfPlan(plan, model, cluster, { profile: calibrate(profile, cluster) }) };
  } catch {
    return { cost };
  }
}
