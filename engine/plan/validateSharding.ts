import type { LayerNode, ModelGraph } from '../model/graph.js';
import type { Findings } from './diagnostics.js';
import type { Plan } from './plan.js';
import { naturalOutput, splitAxis, weightLayout, type LayerSharding, type WeightLayout } from './sbp.js';
import { microBatchSize } from './placement.js';

/**
 * Per-layer sharding must name a layer of the model that sits in a stage with a tensor-parallel
 * degree to split over, split an axis its weight (or output) has, and split it evenly.
 */
export function checkSharding(plan: Plan, model: ModelGraph, findings: Findings): void {
  const byId = new Map(model.layers.map((l) => [l.id, l]));
  const stageOf = new Map<string, number>();
  plan.stages.forEach((stage, s) => stage.layers.forEach((id) => stageOf.has(id) || stageOf.set(id, s)));
  const splitStages = new Set<number>();

  for (const [id, sharding] of Object.entries(plan.sharding)) {
    const layer = byId.get(id);
    if (!layer) {
      findings.error('sharding-unknown-layer', `The sharding names layer "${id}", which the model does not have.`, { layer: id, field: 'sharding' }, 'Remove the entry or re-open the right model.');
      continue;
    }
    const s = stageOf.get(id);
    if (s === undefined) continue; // reported as layer-unassigned
    const degree = plan.stages[s].tensorParallel;
    if (degree === 1) {
      findings.warning('sharding-without-tensor-degree', `Layer "${id}" has a sharding, but stage ${s} has tensorParallel 1: there is nothing to split over, so it has no effect.`, { stage: s, layer: id, field: 'sharding' }, `Raise stage ${s}'s tensorParallel, or remove the sharding of "${id}".`);
      continue;
    }
    const inputShape = byId.get(layer.inputs[0])?.outputShape ?? [];
    const layout = weightLayout(layer, inputShape);
    if (checkWeight(layer, sharding, layout, degree, s, findings)) splitStages.add(s);
    checkOutput(plan, layer, sharding, layout, degree, s, findings);
  }

  plan.stages.forEach((stage, s) => {
    if (stage.tensorParallel > 1 && !splitStages.has(s)) {
      findings.warning('tensor-unused', `Stage ${s} has tensorParallel ${stage.tensorParallel} but none of its layers splits a weight: its ${stage.tensorParallel} shards would all hold and compute the same thing.`, { stage: s, field: 'tensorParallel' }, `Shard a wide layer of stage ${s} (e.g. a Dense weight S(1)), or set tensorParallel to 1.`);
    }
  });
}

/** Returns whether the weight is validly split (so the stage's tensor degree is put to use). */
function checkWeight(layer: LayerNode, sharding: LayerSharding, layout: WeightLayout | undefined, degree: number, s: number, findings: Findings): boolean {
  const axis = splitAxis(sharding.weight);
  if (axis === undefined) return false;
  const where = { stage: s, layer: layer.id, field: 'sharding.weight' };
  if (layer.params === 0) {
    findings.error('sharding-no-weight', `Layer "${layer.id}" has no weights to split (${sharding.weight}).`, where, 'Set its weight to "B" or shard a layer that has weights.');
    return false;
  }
  if (!layout) {
    findings.error('sharding-unsupported-layer', `Shoal does not know how to shard the weights of a ${layer.spec.kind} layer ("${layer.id}").`, where, 'Shard Dense, Embedding or convolution layers; keep this one replicated ("B").');
    return false;
  }
  if (axis >= layout.shape.length) {
    findings.error('split-axis-missing', `Layer "${layer.id}"'s weight has ${layout.shape.length} axes [${layout.shape}], so it has no axis ${axis}.`, where, `Split axis ${layout.produced} (column-parallel) or ${layout.contracted} (row-parallel).`);
    return false;
  }
  if (axis !== layout.contracted && axis !== layout.produced) {
    findings.error('split-axis-unsupported', `Splitting axis ${axis} of layer "${layer.id}"'s weight [${layout.shape}] is not a sharding Shoal can run (only the input and output feature axes can be split).`, where, `Split axis ${layout.produced} (column-parallel) or ${layout.contracted} (row-parallel).`);
    return false;
  }
  if (layout.shape[axis] % degree !== 0) {
    findings.error('split-indivisible', `Axis ${axis} of layer "${layer.id}"'s weight has ${layout.shape[axis]} entries, which do not split evenly over ${degree} shards.`, where, `Use a tensorParallel degree that divides ${layout.shape[axis]}, or split another axis.`);
    return false;
  }
  return true;
}

function checkOutput(plan: Plan, layer: LayerNode, sharding: LayerSharding, layout: WeightLayout | undefined, degree: number, s: number, findings: Findings): void {
  const output = sharding.output;
  if (output === undefined) return;
  const where = { stage: s, layer: layer.id, field: 'sharding.output' };
  if (output === 'P' && naturalOutput(sharding.weight, layout) !== 'P') {
    findings.error('partial-without-contraction', `Layer "${layer.id}" declares a partial-sum output, but only splitting the weight's contracted axis (row-parallel) leaves partial sums; its weight is ${sharding.weight}.`, where, layout ? `Split the weight along axis ${layout.contracted}, or declare the output "B" or "S(k)".` : 'Declare the output "B" or "S(k)".');
    return;
  }
  const axis = splitAxis(output);
  if (axis === undefined) return;
  // Output axes count the batch as axis 0; an inexact micro-batch is reported as batch-indivisible.
  const shape = [microBatchSize(plan), ...layer.outputShape];
  if (axis >= shape.length) {
    findings.error('split-axis-missing', `Layer "${layer.id}"'s output [batch, ${layer.outputShape}] has no axis ${axis}.`, where, `Split an axis between 0 (batch) and ${shape.length - 1}.`);
  } else if (Number.isInteger(shape[axis]) && shape[axis] % degree !== 0) {
    const what = axis === 0 ? `its micro-batch of ${shape[0]} samples` : `axis ${axis} of its output (${shape[axis]} entries)`;
    findings.error('split-indivisible', `Layer "${layer.id}" splits ${what} over ${degree} shards, which does not divide evenly.`, where, axis === 0 ? `Make the micro-batch size a multiple of ${degree}.` : `Use a tensorParallel degree that divides ${shape[axis]}, or split another axis.`);
  }
}
