import type { Findings } from './diagnostics.js';
import type { Plan } from './plan.js';
import { scheduleTraits } from './scheduleTraits.js';

/**
 * Settings that are legal but do not do what their author likely wants: warnings, not errors.
 * With p stages and m micro-batches, a synchronous pipeline idles (p−1)/(m+p−1) of the time; an
 * asynchronous one never flushes, so the first stage's gradients come from weights about (2p−1)/m
 * optimizer steps old (PipeMare's delay), which its corrections are tuned to keep near one step.
 */
export function checkSchedule(plan: Plan, findings: Findings): void {
  const p = plan.stages.length;
  const m = plan.microBatches;
  if (!scheduleTraits(plan.schedule).stepBarrier) {
    if (p === 1) {
      findings.warning('async-single-stage', 'The asynchronous schedule needs pipeline stages to overlap; with one stage it trains exactly like gpipe.', { field: 'schedule' }, 'Use "gpipe", or split the model into several stages.');
    } else if (m < p) {
      findings.warning('async-stale-weights', `With ${p} stages and ${m} micro-batches, the first stage's gradients come from weights about ${((2 * p - 1) / m).toFixed(1)} steps old.`, { field: 'microBatches' }, `Use at least ${p} micro-batches so weights are at most about two steps stale.`);
    }
  } else if (p > 1 && m < p) {
    const bubble = (p - 1) / (m + p - 1);
    findings.warning('few-micro-batches', `With ${p} stages and ${m} micro-batch(es), the pipeline idles ${Math.round(bubble * 100)}% of each step.`, { field: 'microBatches' }, `Use at least ${p} micro-batches (about ${4 * p} keeps the bubble under 20%).`);
  }
  if (plan.zero > 0 && plan.stages.every((stage) => stage.dataParallel === 1)) {
    findings.warning('zero-without-data-parallel', `ZeRO stage ${plan.zero} shards model state over data-parallel replicas, but every stage has one replica: it has no effect.`, { field: 'zero' }, 'Add data-parallel replicas, or set zero to 0.');
  }
}
