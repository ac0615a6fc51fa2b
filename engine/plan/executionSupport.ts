import type { ModelGraph } from '../model/graph.js';
import { Findings, type Diagnostic } from './diagnostics.js';
import type { Plan } from './plan.js';
import { virtualNodesPerReplica } from './virtualNodes.js';

/**
 * What today's agents cannot execute, as errors: kept apart from validatePlan, which judges the plan
 * itself, so that the studio and the cost model can price plans the runtime will only run later while
 * LocalJob still refuses them. Each rule goes away when the agents learn the feature.
 */
export function executionSupport(plan: Plan, model?: ModelGraph): Diagnostic[] {
  const findings = new Findings();
  const perReplica = virtualNodesPerReplica(plan);
  if (plan.schedule === 'async' && perReplica.some((n) => n !== perReplica[0])) {
    findings.error('async-uneven-virtual-nodes', `The asynchronous schedule updates after every micro-batch, all-reducing across replicas, so every replica needs the same number of virtual nodes; the plan has [${perReplica.join(', ')}].`, { field: 'virtualNodes' }, 'Give every replica the same number of virtual nodes, or use the gpipe or 1f1b schedule.');
  }
  if (plan.zero === 3) {
    findings.error('zero-unsupported', 'ZeRO stage 3 (parameters sharded too, gathered layer by layer) is not implemented by the agents yet; stages 1 and 2 are.', { field: 'zero' }, 'Set zero to 2 (sharded optimizer state and gradients) to run the plan now.');
  }
  // The asynchronous schedule updates after every micro-batch with its own replicated optimizer.
  if (plan.schedule === 'async' && plan.zero !== 0) {
    findings.error('async-zero-unsupported', `The asynchronous schedule keeps replicated optimizer state; ZeRO stage ${plan.zero} runs with the gpipe and 1f1b schedules only.`, { field: 'zero' }, 'Set zero to 0, or use the gpipe or 1f1b schedule.');
  }
  if (plan.schedule === 'async' && plan.gradientClipNorm !== undefined) {
    findings.error('async-clipping-unsupported', 'The asynchronous schedule does not clip gradients; gradientClipNorm applies to the gpipe and 1f1b schedules.', { field: 'gradientClipNorm' }, 'Remove gradientClipNorm, or use the gpipe or 1f1b schedule.');
  }
  const degree = plan.stages[0].dataParallel;
  plan.stages.forEach((stage, s) => {
    if (stage.dataParallel !== degree) {
      findings.error('unequal-data-parallel', `Stage ${s} has data-parallel degree ${stage.dataParallel} but stage 0 has ${degree}; the agents pair replicas of neighbouring stages one to one.`, { stage: s, field: 'dataParallel' }, `Give every stage the same data-parallel degree (${degree}).`);
    }
    if (stage.tensorParallel !== 1 && plan.schedule === 'async') {
      findings.error('async-tensor-unsupported', `Stage ${s} has tensorParallel ${stage.tensorParallel}; the asynchronous schedule runs whole stages only.`, { stage: s, field: 'tensorParallel' }, 'Set tensorParallel to 1, or use the gpipe or 1f1b schedule.');
    }
  });
  if (model) {
    const kinds = new Map(model.layers.map((l) => [l.id, l.spec.kind]));
    for (const [id, sharding] of Object.entries(plan.sharding)) {
      const kind = kinds.get(id);
      if (sharding.weight !== 'B' && kind !== undefined && kind !== 'dense') {
        findings.error('tensor-layer-unsupported', `Layer "${id}" is a ${kind} layer with a split weight (${sharding.weight}); the agents shard Dense layers only (column- and row-parallel, and class-sharded classifiers).`, { layer: id, field: 'sharding.weight' }, `Keep "${id}" replicated ("B"), or shard a Dense layer instead.`);
      }
    }
  }
  return findings.list;
}
