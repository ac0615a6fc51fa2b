import type { PlanCost } from '../../../engine/cost/planCost';
import type { StagePrediction } from '../graph/StageNodeView';

const cache = new WeakMap<PlanCost, StagePrediction[]>();

/**
 * Per stage: compute plus exposed communication in one step, the most loaded device's memory against
 * its capacity (does every device of the stage fit), and the bytes its devices send and receive.
 */
export function stagePredictions(cost: PlanCost): StagePrediction[] {
  const known = cache.get(cost);
  if (known) return known;
  const stageOfDevice = new Map(cost.devices.map((d) => [d.device, d.stage]));
  const out: StagePrediction[] = cost.stages.map((s) => ({ ms: s.computeMs + s.exposedCommMs, memoryBytes: 0, capacityBytes: 0, fits: true, trafficBytes: 0 }));
  for (const d of cost.devices) {
    const p = out[d.stage];
    if (!p) continue;
    if (d.memory.total >= p.memoryBytes) {
      p.memoryBytes = d.memory.total;
      p.capacityBytes = d.capacityBytes;
    }
    p.fits &&= d.fits;
  }
  for (const link of cost.links) {
    const [a, b] = [stageOfDevice.get(link.from), stageOfDevice.get(link.to)];
    if (a !== undefined && out[a]) out[a].trafficBytes += link.bytes;
    if (b !== undefined && b !== a && out[b]) out[b].trafficBytes += link.bytes;
  }
  cache.set(cost, out);
  return out;
}
