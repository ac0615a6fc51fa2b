import type { ClusterSpec } from '../cluster/spec.js';
import type { ModelGraph } from '../model/graph.js';
import type { Diagnostic } from '../plan/diagnostics.js';
import type { Plan } from '../plan/plan.js';
import { costOfPlan } from './costOfPlan.js';

const GiB = 2 ** 30;

function gib(bytes: number): string {
  return `${(bytes / GiB).toFixed(bytes < GiB ? 2 : 1)} GiB`;
}

/**
 * The plan's predicted memory per device against each device's memory: a plan that cannot fit is
 * refused before any process starts (an agent would otherwise fail allocating, or the machine swap),
 * naming the device that needs the most, what it needs it for and what would make it fit. Call it
 * on a plan validatePlan accepted for `cluster`.
 */
export function memoryDiagnostics(plan: Plan, model: ModelGraph, cluster: ClusterSpec): Diagnostic[] {
  const over = costOfPlan(plan, model, cluster).devices.filter((d) => !d.fits);
  if (!over.length) return [];
  const worst = over.reduce((a, b) => (b.memory.total - b.capacityBytes > a.memory.total - a.capacityBytes ? b : a));
  const m = worst.memory;
  const device = cluster.devices[worst.device];
  const parts = `parameters ${gib(m.parameters)}, gradients ${gib(m.gradients)}, optimizer state ${gib(m.optimizer)}, activations ${gib(m.activations)}, buffers ${gib(m.buffers)}`;
  return [
    {
      severity: 'error',
      code: 'plan-out-of-memory',
      message: `The plan needs ${gib(m.total)} on device ${worst.device} (stage ${worst.stage}: ${parts}), but that device (${device.model} on ${device.host}) holds ${gib(worst.capacityBytes)}${over.length > 1 ? `; ${over.length} of ${cluster.devices.length} devices are over` : ''}.`,
      where: { device: worst.device, stage: worst.stage },
      hint: 'Make the model smaller, use more pipeline stages or ZeRO (--zero 1 or 2) to split its state, a smaller --batch or more --micro-batches, or devices with more memory.',
    },
  ];
}
