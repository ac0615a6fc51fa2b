import { dataParallelRing, devicesOfReplica, type CostContext } from './costContext.js';
import type { LinkTraffic } from './planCost.js';

/**
 * Bytes every link carries in one step: activations and their gradients between neighbouring stages,
 * each hop of the data-parallel all-reduce rings (2(n−1)/n of the gradients per member), and the
 * tensor-parallel collectives inside each stage replica.
 */
export function stepTraffic(ctx: CostContext, perReplica: number[]): LinkTraffic[] {
  const { plan, facts, microBatch: b, scale, bytesPerElement } = ctx;
  const bytes = new Map<string, number>();
  const add = (a: number, c: number, n: number) => {
    if (a === c || n <= 0) return;
    const key = a < c ? `${a}-${c}` : `${c}-${a}`;
    bytes.set(key, (bytes.get(key) ?? 0) + n);
  };
  const ringTraffic = (devices: number[], perMember: number) => {
    for (let i = 0; i < devices.length; i++) add(devices[i], devices[(i + 1) % devices.length], perMember);
  };
  const replicas = plan.stages[0].dataParallel;
  for (let r = 0; r < replicas; r++) {
    const micro = (perReplica[r] ?? 1) * plan.microBatches;
    plan.stages.forEach((stage, s) => {
      const devices = devicesOfReplica(ctx, s, r);
      if (s < plan.stages.length - 1) {
        const next = devicesOfReplica(ctx, s + 1, r)[0];
        add(devices[0], next, micro * b * (facts[s].liveOutBytes + facts[s + 1].liveInBytes) * scale);
      }
      const t = stage.tensorParallel;
      if (t > 1) {
        const perSample = [...facts[s].forwardCollectives, ...facts[s].backwardCollectives].reduce(
          (sum, c) => sum + (c.kind === 'allReduce' ? (2 * (t - 1)) / t : (t - 1) / t) * c.bytes,
          0,
        );
        ringTraffic(devices, micro * b * perSample * scale);
      }
    });
  }
  plan.stages.forEach((stage, s) => {
    const rounds = plan.zero >= 3 ? 2 : 1;
    const perMember = (bytesTotal: number, n: number) => (n > 1 ? rounds * ((2 * (n - 1)) / n) * bytesTotal : 0);
    const batchSplit = facts[s].batchSplitParams * bytesPerElement;
    const sharded = (facts[s].params - facts[s].batchSplitParams) * bytesPerElement;
    const whole = ctx.layout.filter((p) => p.stage === s).map((p) => p.device);
    ringTraffic(whole, perMember(batchSplit, whole.length));
    for (let shard = 0; shard < stage.tensorParallel; shard++) {
      const ring = dataParallelRing(ctx, s, shard);
      ringTraffic(ring, perMember(sharded, ring.length));
    }
  });
  return [...bytes.entries()].map(([key, n]) => {
    const [from, to] = key.split('-').map(Number);
    return { from, to, bytes: n };
  });
}
