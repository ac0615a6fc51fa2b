import type { ClusterSpec } from '../cluster/spec.js';
import type { ModelGraph } from '../model/graph.js';
import { Findings, type Diagnostic } from './diagnostics.js';
import type { Plan } from './plan.js';
import { checkBatch } from './validateBatch.js';
import { checkDevices } from './validateDevices.js';
import { checkSchedule } from './validateSchedule.js';
import { checkSharding } from './validateSharding.js';

/**
 * Judge a (schema-valid) plan against its model and, when given, the cluster it is meant for. Returns
 * every problem found, errors and warnings; no errors means the plan is well-formed and fits the
 * cluster. Whether today's agents can execute it is a separate question: see executionSupport.
 */
export function validatePlan(plan: Plan, model: ModelGraph, cluster?: ClusterSpec): Diagnostic[] {
  const findings = new Findings();
  // A model opened from a file is named by its path in plans (its own name is rarely unique).
  if (plan.model !== model.name && plan.model !== model.source?.modelFile) {
    findings.error('model-mismatch', `The plan is for model "${plan.model}" but the model is "${model.name}".`, { field: 'model' }, 'Open the model the plan was made for, or re-plan.');
  }
  checkStages(plan, model, findings);
  checkBatch(plan, findings);
  checkDevices(plan, cluster, findings);
  checkSharding(plan, model, findings);
  checkSchedule(plan, findings);
  return findings.list;
}

/** Stages must be non-empty and cover every layer exactly once, in graph order, as contiguous runs. */
function checkStages(plan: Plan, model: ModelGraph, findings: Findings): void {
  const order = new Map(model.layers.map((l, i) => [l.id, i]));
  const owner = new Map<string, number>();
  plan.stages.forEach((stage, s) => {
    if (stage.layers.length === 0) {
      findings.error('stage-empty', `Stage ${s} has no layers.`, { stage: s, field: 'layers' }, 'Drag layers into the stage or remove it.');
    }
    for (const id of stage.layers) {
      if (!order.has(id)) {
        findings.error('unknown-layer', `Stage ${s} names layer "${id}", which the model does not have.`, { stage: s, layer: id }, 'Remove the layer from the stage or re-open the right model.');
      } else if (owner.has(id)) {
        findings.error('layer-twice', `Layer "${id}" is in stage ${owner.get(id)} and stage ${s}.`, { stage: s, layer: id }, 'Keep each layer in exactly one stage.');
      } else {
        owner.set(id, s);
      }
    }
  });
  for (const layer of model.layers) {
    if (!owner.has(layer.id)) findings.error('layer-unassigned', `Layer "${layer.id}" is in no stage.`, { layer: layer.id }, 'Drag the layer into a stage.');
  }
  let lastStage = 0;
  for (const layer of model.layers) {
    const s = owner.get(layer.id);
    if (s === undefined) continue;
    if (s < lastStage) {
      findings.error('stage-order', `Layer "${layer.id}" (stage ${s}) comes after a layer of stage ${lastStage}; stages must follow the graph order.`, { stage: s, layer: layer.id }, 'Move the layer into a later stage, or move the earlier layers back.');
    }
    lastStage = Math.max(lastStage, s);
  }
}
