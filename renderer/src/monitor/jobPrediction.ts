import { predictPlan } from '../../../engine/cost/predictPlan';
import type { ModelGraph } from '../../../engine/model/graph';
import type { Plan } from '../../../engine/plan/plan';
import type { JobProfile } from '../../../engine/protocol/profile';
import type { TimelineEvent } from '../../../engine/protocol/timeline';
import { clusterSpec } from '../store/clusters';

export interface JobPrediction {
  timeline: TimelineEvent[];
  stepMs: number;
  /** Priced with what the job's agents measured (its profile) rather than datasheet speeds. */
  calibrated: boolean;
}

/**
 * The cost model's timeline of one step of a running job's plan on this machine's agents: calibrated
 * by the job's profile once the agents have measured it, so it compares with the measured timeline.
 */
export function predictJob(plan: Plan, model: ModelGraph, agents: number, profile?: JobProfile): JobPrediction | undefined {
  if (plan.model !== model.name) return undefined;
  const cluster = clusterSpec('local', Math.max(1, agents));
  try {
    // A profile the cost model cannot use (e.g. of another plan) leaves the datasheet speeds.
    const { cost, calibrated } = predictPlan(plan, model, cluster, profile);
    const shown = calibrated ?? cost;
    return { timeline: shown.timeline, stepMs: shown.stepMs, calibrated: !!calibrated };
  } catch {
    return undefined;
  }
}
