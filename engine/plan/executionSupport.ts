import { Findings, type Diagnostic } from './diagnostics.js';
import type { Plan } from './plan.js';
import { virtualNodesPerReplica } from './virtualNodes.js';

/**
 * What today's agents cannot execute, as errors: kept apart from validatePlan, which judges the plan
 * itself, so that the studio and the cost model can price plans the runtime will only run later while
 * LocalJob still refuses them. Each rule goes away when the agents learn the feature.
 */
export function executionSupport(plan: Plan): Diagnostic[] {
  const findings = new Findings();
  const perReplica = virtualNodesPerReplica(plan);
  if (plan.schedule === 'async' && perReplica.some((n) => n !== perReplica[0])) {
    findings.error('async-uneven-virtual-nodes', `The asynchronous schedule updates after every micro-batch, all-reducing across replicas, so every replica needs the same number of virtual nodes; the plan has [${perReplica.join(', ')}].`, { field: 'virtualNodes' }, 'Give every replica the same number of virtual nodes, or use the gpipe or 1f1b schedule.');
  }
  if (plan.zero !== 0) {
    findings.error('zero-unsupported', `ZeRO stage ${plan.zero} is not implemented by the agents yet.`, { field: 'zero' }, 'Set zero to 0 (replicated model state) to run the plan now.');
  }
  const degree = plan.stages[0].dataParallel;
  plan.stages.forEach((stage, s) => {
    if (stage.dataParallel !== degree) {
      findings.error('unequal-data-parallel', `Stage ${s} has data-parallel degree ${stage.dataParallel} but stage 0 has ${degree}; the agents pair replicas of neighbouring stages one to one.`, { stage: s, field: 'dataParallel' }, `Give every stage the same data-parallel degree (${degree}).`);
    }
    if (stage.tensorParallel !== 1) {
      findings.error('tensor-unsupported', `Stage ${s} has tensorParallel ${stage.tensorParallel}; the agents do not run sharded layers yet.`, { stage: s, field: 'tensorParallel' }, 'Set tensorParallel to 1 and use data-parallel replicas or more stages instead.');
    }
  });
  return findings.list;
}
