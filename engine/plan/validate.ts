import type { ModelGraph } from '../model/graph.js';
import type { Diagnostic } from './diagnostics.js';
import type { Plan } from './plan.js';

/**
 * Check a (schema-valid) plan against its model and the number of agents available. Returns every
 * problem found; an empty list means the agents can execute the plan.
 */
export function validatePlan(plan: Plan, model: ModelGraph, agentsAvailable?: number): Diagnostic[] {
  const out: Diagnostic[] = [];
  const err = (code: string, message: string, where: Diagnostic['where'], hint: string) =>
    out.push({ severity: 'error', code, message, where, hint });

  if (plan.model !== model.name) {
    err('model-mismatch', `The plan is for model "${plan.model}" but the model is "${model.name}".`, { field: 'model' }, 'Open the model the plan was made for, or re-plan.');
  }

  // Stages must cover every layer exactly once, in graph order, as contiguous runs.
  const order = new Map(model.layers.map((l, i) => [l.id, i]));
  const owner = new Map<string, number>();
  plan.stages.forEach((stage, s) => {
    for (const id of stage.layers) {
      if (!order.has(id)) {
        err('unknown-layer', `Stage ${s} names layer "${id}", which the model does not have.`, { stage: s, layer: id }, 'Remove the layer from the stage or re-open the right model.');
      } else if (owner.has(id)) {
        err('layer-twice', `Layer "${id}" is in stage ${owner.get(id)} and stage ${s}.`, { stage: s, layer: id }, 'Keep each layer in exactly one stage.');
      } else {
        owner.set(id, s);
      }
    }
  });
  for (const layer of model.layers) {
    if (!owner.has(layer.id)) {
      err('layer-unassigned', `Layer "${layer.id}" is in no stage.`, { layer: layer.id }, 'Drag the layer into a stage.');
    }
  }
  let lastStage = 0;
  for (const layer of model.layers) {
    const s = owner.get(layer.id);
    if (s === undefined) continue;
    if (s < lastStage) {
      err('stage-order', `Layer "${layer.id}" (stage ${s}) comes after a layer of stage ${lastStage}; stages must follow the graph order.`, { stage: s, layer: layer.id }, 'Move the layer into a later stage, or move the earlier layers back.');
    }
    lastStage = Math.max(lastStage, s);
  }

  const degree = plan.stages[0].dataParallel;
  plan.stages.forEach((stage, s) => {
    if (stage.dataParallel !== degree) {
      err('unequal-data-parallel', `Stage ${s} has data-parallel degree ${stage.dataParallel} but stage 0 has ${degree}; this version pairs replicas of neighbouring stages one to one.`, { stage: s, field: 'dataParallel' }, `Give every stage the same data-parallel degree (${degree}).`);
    }
  });
  if (plan.globalBatch % (degree * plan.microBatches) !== 0) {
    err('batch-indivisible', `The global batch ${plan.globalBatch} does not divide into ${degree} replicas × ${plan.microBatches} micro-batches.`, { field: 'globalBatch' }, `Use a global batch that is a multiple of ${degree * plan.microBatches}.`);
  }
  if (plan.schedule !== 'gpipe') {
    err('schedule-unsupported', `Schedule "${plan.schedule}" is not implemented by the agents yet.`, { field: 'schedule' }, 'Use the "gpipe" schedule.');
  }
  if (plan.zero !== 0) {
    err('zero-unsupported', `ZeRO stage ${plan.zero} is not implemented by the agents yet.`, { field: 'zero' }, 'Set zero to 0.');
  }
  const needed = plan.stages.reduce((sum, st) => sum + st.dataParallel, 0);
  if (agentsAvailable !== undefined && needed > agentsAvailable) {
    err('too-few-agents', `The plan needs ${needed} agents but the cluster has ${agentsAvailable}.`, { field: 'stages' }, `Lower the pipeline or data-parallel degree, or use a cluster with at least ${needed} agents.`);
  }
  return out;
}
