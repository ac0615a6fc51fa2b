import type { ClusterSpec } from '../cluster/spec.js';
import type { Findings } from './diagnostics.js';
import { LIMITS } from './limits.js';
import { placements } from './placement.js';
import { agentsNeeded, type Plan } from './plan.js';

/**
 * Every rank needs a device of its own, and explicit device groups must have one device per rank of
 * their stage. Without a cluster only the shape of the groups can be checked.
 */
export function checkDevices(plan: Plan, cluster: ClusterSpec | undefined, findings: Findings): void {
  const needed = agentsNeeded(plan);
  // Before anything per rank: the placements below allocate one entry for each.
  if (needed > LIMITS.devices) {
    findings.error('too-many-agents', `The plan needs ${needed} agents; Shoal runs at most ${LIMITS.devices}.`, { field: 'stages' }, `Lower the data-parallel or tensor-parallel degrees so that at most ${LIMITS.devices} devices are used.`);
    return;
  }
  plan.stages.forEach((stage, s) => {
    const ranks = stage.dataParallel * stage.tensorParallel;
    if (stage.devices && stage.devices.length !== ranks) {
      findings.error(
        'device-group-size',
        `Stage ${s} lists ${stage.devices.length} devices but runs ${stage.dataParallel} replica(s) × ${stage.tensorParallel} shard(s) = ${ranks} ranks.`,
        { stage: s, field: 'devices' },
        `List exactly ${ranks} devices for stage ${s}, or change its dataParallel or tensorParallel degree.`,
      );
    }
  });

  const available = cluster?.devices.length;
  if (available !== undefined && needed > available) {
    findings.error('too-few-agents', `The plan needs ${needed} agents but the cluster has ${available} devices (one agent each).`, { field: 'stages' }, `Lower the pipeline, data-parallel or tensor-parallel degree, or use a cluster with at least ${needed} devices.`);
  }

  const user = new Map<number, { stage: number; rank: number }>();
  for (const p of placements(plan)) {
    const explicit = plan.stages[p.stage].devices !== undefined;
    if (explicit && available !== undefined && p.device >= available) {
      findings.error('device-out-of-range', `Stage ${p.stage} names device ${p.device}, but the cluster's devices are 0–${available - 1}.`, { stage: p.stage, device: p.device, field: 'devices' }, `Pick devices between 0 and ${available - 1}.`);
      continue;
    }
    const previous = user.get(p.device);
    if (previous) {
      const implicit = explicit ? '' : ` (stage ${p.stage} has no device group, so rank ${p.rank} runs on device ${p.rank})`;
      findings.error(
        'device-shared',
        `Device ${p.device} serves rank ${previous.rank} of stage ${previous.stage} and rank ${p.rank} of stage ${p.stage}${implicit}.`,
        { stage: p.stage, device: p.device, field: 'devices' },
        'Give every rank its own device: list distinct devices in each stage\'s device group.',
      );
    } else {
      user.set(p.device, { stage: p.stage, rank: p.rank });
    }
  }
}
