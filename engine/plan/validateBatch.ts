import type { Findings } from './diagnostics.js';
import type { Plan } from './plan.js';

/**
 * The global batch is cut into virtual nodes (by default one per data-parallel replica), and each
 * virtual node's slice into micro-batches; every cut must be exact, or replicas would train on
 * different amounts of data and the result would depend on the hardware.
 */
export function checkBatch(plan: Plan, findings: Findings): void {
  const vn = plan.virtualNodes;
  if (!vn) {
    const seen = new Set<number>();
    plan.stages.forEach((stage, s) => {
      const parts = stage.dataParallel * plan.microBatches;
      if (seen.has(stage.dataParallel)) return;
      seen.add(stage.dataParallel);
      if (plan.globalBatch % parts !== 0) {
        findings.error(
          'batch-indivisible',
          `The global batch ${plan.globalBatch} does not divide into ${stage.dataParallel} replica(s) × ${plan.microBatches} micro-batches (stage ${s}).`,
          { stage: s, field: 'globalBatch' },
          `Use a global batch that is a multiple of ${parts}, or change the micro-batch count.`,
        );
      }
    });
    return;
  }

  const parts = vn.total * plan.microBatches;
  if (plan.globalBatch % parts !== 0) {
    findings.error('batch-indivisible', `The global batch ${plan.globalBatch} does not divide into ${vn.total} virtual nodes × ${plan.microBatches} micro-batches.`, { field: 'globalBatch' }, `Use a global batch that is a multiple of ${parts}, or change virtualNodes.total or the micro-batch count.`);
  }
  const perReplica = vn.perReplica;
  if (perReplica) {
    const sum = perReplica.reduce((a, b) => a + b, 0);
    if (sum !== vn.total) {
      findings.error('virtual-nodes-sum', `virtualNodes.perReplica assigns ${sum} virtual nodes but virtualNodes.total is ${vn.total}.`, { field: 'virtualNodes.perReplica' }, `Make the per-replica counts add up to ${vn.total}; keep total fixed so the hyperparameters keep their meaning.`);
    }
    plan.stages.forEach((stage, s) => {
      if (perReplica.length !== stage.dataParallel) {
        findings.error('virtual-nodes-count', `virtualNodes.perReplica has ${perReplica.length} entries but stage ${s} has ${stage.dataParallel} data-parallel replica(s).`, { stage: s, field: 'virtualNodes.perReplica' }, `Give one count per replica (${stage.dataParallel}), or give every stage the same data-parallel degree.`);
      }
    });
  } else {
    plan.stages.forEach((stage, s) => {
      if (vn.total < stage.dataParallel) {
        findings.error('virtual-nodes-too-few', `Stage ${s} has ${stage.dataParallel} replicas but there are only ${vn.total} virtual nodes: some replicas would idle.`, { stage: s, field: 'virtualNodes.total' }, `Use at least ${stage.dataParallel} virtual nodes, or fewer replicas.`);
      }
    });
  }
}
