import type { ModelGraph } from '../model/graph.js';
import { sharedLayerCalls } from '../model/sharedLayers.js';
import { Findings, type Diagnostic } from './diagnostics.js';
import type { Plan } from './plan.js';
import { virtualNodesPerReplica } from './virtualNodes.js';
import { scheduleTraits } from './scheduleTraits.js';
import { REFUSED_LAYER_CLASSES } from './refusedLayers.js';
import { inputShapeOf, shardingProblem, unshardableLayer } from './tensorSharding.js';

/**
 * What today's agents cannot execute, as errors: kept apart from validatePlan, which judges the plan
 * itself, so that the studio and the cost model can price plans the runtime will only run later while
 * LocalJob still refuses them. Each rule goes away when the agents learn the feature.
 */
export function executionSupport(plan: Plan, model?: ModelGraph): Diagnostic[] {
  const findings = new Findings();
  const perReplica = virtualNodesPerReplica(plan);
  // The asynchronous pipeline (no step barrier) runs a subset of what synchronous schedules do.
  const streamed = !scheduleTraits(plan.schedule).stepBarrier;
  if (streamed && perReplica.some((n) => n !== perReplica[0])) {
    findings.error('async-uneven-virtual-nodes', `The asynchronous schedule updates after every micro-batch, all-reducing across replicas, so every replica needs the same number of virtual nodes; the plan has [${perReplica.join(', ')}].`, { field: 'virtualNodes' }, 'Give every replica the same number of virtual nodes, or use the gpipe or 1f1b schedule.');
  }
  if (plan.zero === 3) {
    findings.error('zero-unsupported', 'ZeRO stage 3 (parameters sharded too, gathered layer by layer) is not implemented by the agents yet; stages 1 and 2 are.', { field: 'zero' }, 'Set zero to 2 (sharded optimizer state and gradients) to run the plan now.');
  }
  // The asynchronous schedule updates after every micro-batch with its own replicated optimizer.
  if (streamed && plan.zero !== 0) {
    findings.error('async-zero-unsupported', `The asynchronous schedule keeps replicated optimizer state; ZeRO stage ${plan.zero} runs with the gpipe and 1f1b schedules only.`, { field: 'zero' }, 'Set zero to 0, or use the gpipe or 1f1b schedule.');
  }
  if (streamed && plan.gradientClipNorm !== undefined) {
    findings.error('async-clipping-unsupported', 'The asynchronous schedule does not clip gradients; gradientClipNorm applies to the gpipe and 1f1b schedules.', { field: 'gradientClipNorm' }, 'Remove gradientClipNorm, or use the gpipe or 1f1b schedule.');
  }
  const degree = plan.stages[0].dataParallel;
  plan.stages.forEach((stage, s) => {
    if (stage.dataParallel !== degree) {
      findings.error('unequal-data-parallel', `Stage ${s} has data-parallel degree ${stage.dataParallel} but stage 0 has ${degree}; the agents pair replicas of neighbouring stages one to one.`, { stage: s, field: 'dataParallel' }, `Give every stage the same data-parallel degree (${degree}).`);
    }
    if (stage.tensorParallel !== 1 && streamed) {
      findings.error('async-tensor-unsupported', `Stage ${s} has tensorParallel ${stage.tensorParallel}; the asynchronous schedule runs whole stages only.`, { stage: s, field: 'tensorParallel' }, 'Set tensorParallel to 1, or use the gpipe or 1f1b schedule.');
    }
  });
  if (model) graphSupport(plan, model, findings);
  if (model) tensorSupport(plan, model, findings);
  return findings.list;
}

/**
 * A model the agents can train: a built-in one (its own executor), or one imported from a model file,
 * whose layers tfjs-layers builds. Refusals name the layer and its class and say what to do.
 */
function graphSupport(plan: Plan, model: ModelGraph, findings: Findings): void {
  if (!model.source) {
    if (model.numClasses === undefined) {
      findings.error('model-not-trainable', `Model "${model.name}" is a zoo architecture for planning and pricing; the agents train the built-in mnist models and models opened from a file.`, {}, 'Save the model with tfjs (model.save) and pass its model.json with --model, or pick mlp, mlp-wide or cnn.');
    }
    return;
  }
  for (const layer of model.layers) {
    if (layer.spec.kind === 'opaque') {
      findings.error('layer-not-executable', `Layer "${layer.id}" is a ${layer.spec.className}, which neither tfjs-layers nor a --layers module registers (or which could not be built), so the agents cannot train this model.`, { layer: layer.id }, `If ${layer.spec.className} is your own layer class, pass the module that registers it with --layers FILE (exporting register(tf)); otherwise replace it with built-in Keras layers.`);
    }
    const className = kerasClassOf(layer);
    const refused = className === undefined ? undefined : REFUSED_LAYER_CLASSES[className];
    if (refused) {
      findings.error('layer-class-refused', `Layer "${layer.id}" is a ${className}, which the agents do not train: ${refused}.`, { layer: layer.id }, `Replace the ${className} layer (README.md, "Layer classes Shoal refuses"), or remove it.`);
    }
    // tfjs-layers 4.22 throws on causal padding in Conv1D ("not implemented yet").
    if (layer.spec.kind === 'conv' && layer.spec.padding === 'causal') {
      findings.error('causal-padding-unsupported', `Layer "${layer.id}" is a Conv1D with causal padding, which tfjs-layers (the agents' layer library) does not implement.`, { layer: layer.id }, `Put a ZeroPadding1D of (kernel size − 1) × dilation steps on the left before "${layer.id}" and give it valid padding: the same computation.`);
    }
  }
  // A layer called in two stages would hold two copies of its weights that learn apart.
  const stageOf = new Map<string, number>();
  plan.stages.forEach((stage, s) => stage.layers.forEach((id) => stageOf.set(id, s)));
  for (const [base, calls] of sharedLayerCalls(model)) {
    const stages = [...new Set(calls.map((id) => stageOf.get(id)).filter((s) => s !== undefined))];
    if (stages.length > 1) {
      findings.error('shared-layer-split', `Layer "${base}" is called ${calls.length} times (${calls.join(', ')}) and those calls sit in stages ${stages.join(' and ')}; a shared layer's weights must live in one stage.`, { layer: base }, `Move every call of "${base}" into one stage.`);
    }
  }
}

/** The Keras class of a layer where its spec keeps it (an imported class without a spec of Shoal's own). */
function kerasClassOf(layer: ModelGraph['layers'][number]): string | undefined {
  return layer.spec.kind === 'tfjsLayer' ? layer.spec.className : undefined;
}

/**
 * What a tensor-parallel stage cannot run, for any model: a layer kind it cannot execute on split rows
 * (batch normalisation), or a split weight the agents cannot split that way (engine/plan/tensorSharding.ts).
 */
function tensorSupport(plan: Plan, model: ModelGraph, findings: Findings): void {
  const byId = new Map(model.layers.map((l) => [l.id, l]));
  plan.stages.forEach((stage, s) => {
    if (stage.tensorParallel === 1) return;
    for (const id of stage.layers) {
      const refusal = byId.has(id) ? unshardableLayer(byId.get(id)!) : null;
      if (refusal) findings.error('tensor-layer-unsupported', refusal, { stage: s, layer: id, field: 'tensorParallel' }, `Set tensorParallel to 1 for stage ${s}, or replace "${id}".`);
    }
  });
  const degree = new Map(plan.stages.flatMap((stage) => stage.layers.map((id) => [id, stage.tensorParallel] as const)));
  for (const [id, sharding] of Object.entries(plan.sharding)) {
    const layer = byId.get(id);
    if (!layer) continue;
    const problem = shardingProblem(layer, sharding.weight, degree.get(id) ?? 1, inputShapeOf(model, layer));
    if (problem) findings.error('tensor-layer-unsupported', problem, { layer: id, field: 'sharding.weight' }, `Keep "${id}" replicated ("B").`);
  }
}
