import { localClusterSpec } from '../../cluster/cluster.js';
import type { ClusterSpec } from '../../cluster/spec.js';
import { memoryDiagnostics } from '../../cost/memoryFit.js';
import { stepsPerEpoch } from '../../data/dataOrder.js';
import type { ModelGraph } from '../../model/graph.js';
import { formatDiagnostics, hasErrors, type Diagnostic } from '../../plan/diagnostics.js';
import { executionSupport } from '../../plan/executionSupport.js';
import { LIMITS } from '../../plan/limits.js';
import type { Plan } from '../../plan/plan.js';
import { validatePlan } from '../../plan/validate.js';
import { sampleCounts, type TrainingSetup } from '../../protocol/trainingSetup.js';

/**
 * The one check every job passes before anything of it starts or is written — `shoal train`, `deploy`,
 * `resume` and the studio's Train and Deploy alike: the plan runs on its agents and fits their memory,
 * the global batch fits the data, and the run length is one the coordinator accepts. A refusal here
 * names the option to change; found later, the same mistake would surface as an agent's or the
 * coordinator's failure, after a run folder was made.
 */

/** What validatePlan, executionSupport and the memory check say of a plan on a cluster. */
export function planDiagnostics(plan: Plan, model: ModelGraph, cluster: ClusterSpec): Diagnostic[] {
  const diagnostics = [...validatePlan(plan, model, cluster), ...executionSupport(plan, model)];
  // Only a plan that is well formed for the cluster can be priced.
  return hasErrors(diagnostics) ? diagnostics : [...diagnostics, ...memoryDiagnostics(plan, model, cluster)];
}

/** A plan that cannot run on `agents` processes is refused before anything starts, with the diagnostics. */
export function assertPlanRuns(plan: Plan, model: ModelGraph, agents: number): void {
  // The plan's device indices are checked against the hosts' devices once they are known (agentPlacement.ts).
  const devices = Math.max(agents, ...plan.stages.flatMap((s) => s.devices ?? []).map((d) => d + 1));
  const diagnostics = planDiagnostics(plan, model, localClusterSpec(devices));
  if (hasErrors(diagnostics)) throw new Error(`The plan cannot run:\n${formatDiagnostics(diagnostics)}`);
}

export interface JobLength {
  /** Steps asked for exactly (--steps), or epochs over the training samples (--epochs); default 1 epoch. */
  steps?: number;
  epochs?: number;
}

/** The job's number of steps, checked: the global batch fits the training samples, and the steps are at most LIMITS.steps. */
export function checkedSteps(plan: Plan, length: JobLength, training?: TrainingSetup): number {
  const samples = sampleCounts(training).trainSamples;
  if (plan.globalBatch > samples) {
    throw new Error(`The global batch ${plan.globalBatch} (--batch, the plan's globalBatch) is larger than the ${samples} training samples: one step could not be filled. Give --batch ${samples} or less, or more data.`);
  }
  if (length.steps !== undefined) {
    if (!Number.isInteger(length.steps) || length.steps < 1 || length.steps > LIMITS.steps) throw new Error(`--steps ${length.steps}: expected a whole number from 1 to ${LIMITS.steps}.`);
    return length.steps;
  }
  const epochs = length.epochs ?? 1;
  // As model.fit counts them: the rows left after the full batches are one more, smaller step.
  const perEpoch = stepsPerEpoch(samples, plan.globalBatch);
  const steps = Math.max(1, Math.round(epochs * perEpoch));
  if (!Number.isFinite(steps) || steps > LIMITS.steps) {
    throw new Error(`--epochs ${epochs} comes to ${steps.toExponential(2)} steps (${perEpoch} per epoch of ${samples} samples at batch ${plan.globalBatch}); a job runs at most ${LIMITS.steps} steps. Give at most ${Math.floor(LIMITS.steps / perEpoch)} epochs.`);
  }
  return steps;
}

/** Everything checkable about a job before it starts; returns its number of steps. */
export function preflightJob(o: { plan: Plan; model: ModelGraph; agents: number; training?: TrainingSetup } & JobLength): number {
  assertPlanRuns(o.plan, o.model, o.agents);
  return checkedSteps(o.plan, o, o.training);
}
