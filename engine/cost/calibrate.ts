import type { ClusterSpec } from '../cluster/spec.js';
import type { JobProfile, LayerTiming } from '../protocol/profile.js';
import type { CostProfile } from './planCost.js';

/**
 * A straight line ms = perCall + perSample · batch through (batch, ms) points by least squares: the
 * per-call part is what a tfjs call costs whatever its size (dispatch, allocation), the per-sample part
 * what grows with the batch. One batch size (or a negative intercept) gives a line through the origin.
 */
export function fitPerCall(points: Array<{ batch: number; ms: number }>): { perCall: number; perSample: number } {
  const through0 = () => {
    const samples = points.reduce((s, p) => s + p.batch * p.batch, 0);
    return { perCall: 0, perSample: samples > 0 ? points.reduce((s, p) => s + p.batch * p.ms, 0) / samples : 0 };
  };
  const n = points.length;
  if (n === 0) return { perCall: 0, perSample: 0 };
  const mx = points.reduce((s, p) => s + p.batch, 0) / n;
  const my = points.reduce((s, p) => s + p.ms, 0) / n;
  const sxx = points.reduce((s, p) => s + (p.batch - mx) ** 2, 0);
  if (sxx === 0) return through0();
  const perSample = points.reduce((s, p) => s + (p.batch - mx) * (p.ms - my), 0) / sxx;
  const perCall = my - perSample * mx;
  if (perCall < 0 || perSample < 0) return perSample < 0 ? { perCall: Math.max(0, my), perSample: 0 } : through0();
  return { perCall, perSample };
}

export interface CalibrateOptions {
  /**
   * Give device pairs that were not measured the median of the measured links inside the same host
   * (loopback or one machine's interconnect is the same for every pair). Default true.
   */
  fillSameHost?: boolean;
}

const median = (xs: number[]) => {
  const s = [...xs].sort((a, b) => a - b);
  const mid = s.length >> 1;
  return s.length % 2 ? s[mid] : (s[mid - 1] + s[mid]) / 2;
};

/**
 * Turn a job's measurements (profile.json) into the cost model's CostProfile for a cluster: per layer,
 * forward and backward time per sample and per call on the device model that ran it; sustained FLOP/s
 * of each profiled device; α and β of each measured link; the optimizer's cost per parameter; and how
 * the executor runs a stage (it recomputes the forward inside the backward).
 */
export function calibrate(profile: JobProfile, cluster: ClusterSpec, options: CalibrateOptions = {}): CostProfile {
  const modelOf = (device: number) => cluster.devices[device]?.model ?? `device ${device}`;

  // Layers: fit every (layer, device model) over all agents and batch sizes; keep the device model with the most points.
  const groups = new Map<string, { id: string; device: string; timings: LayerTiming[] }>();
  for (const t of profile.layers) {
    const key = `${t.id}\u0000${modelOf(t.device)}`;
    const group = groups.get(key) ?? { id: t.id, device: modelOf(t.device), timings: [] };
    group.timings.push(t);
    groups.set(key, group);
  }
  const layers: NonNullable<CostProfile['layers']> = {};
  const pointsKept = new Map<string, number>();
  for (const g of groups.values()) {
    if ((pointsKept.get(g.id) ?? 0) >= g.timings.length) continue;
    pointsKept.set(g.id, g.timings.length);
    const forward = fitPerCall(g.timings.map((t) => ({ batch: t.batch, ms: t.forwardMs })));
    const backward = fitPerCall(g.timings.map((t) => ({ batch: t.batch, ms: t.backwardMs })));
    layers[g.id] = {
      device: g.device,
      forwardMsPerSample: forward.perSample,
      backwardMsPerSample: backward.perSample,
      forwardMsPerCall: forward.perCall,
      backwardMsPerCall: backward.perCall,
    };
  }

  // Sustained FLOP/s per device: the FLOPs it timed over the time they took.
  const deviceFlops: Record<number, number> = {};
  const work = new Map<number, { flops: number; ms: number }>();
  for (const t of profile.layers) {
    const w = work.get(t.device) ?? { flops: 0, ms: 0 };
    w.flops += t.batch * (t.forwardFlops + t.backwardFlops);
    w.ms += t.forwardMs + t.backwardMs;
    work.set(t.device, w);
  }
  for (const [device, w] of work) if (w.flops > 0 && w.ms > 0) deviceFlops[device] = w.flops / (w.ms / 1000);

  // Links, keyed by device pair; several measurements of one pair keep the best (lowest α, highest β).
  const links: NonNullable<CostProfile['links']> = {};
  for (const l of profile.links) {
    if (l.fromDevice === l.toDevice) continue;
    const key = l.fromDevice < l.toDevice ? `${l.fromDevice}-${l.toDevice}` : `${l.toDevice}-${l.fromDevice}`;
    const had = links[key];
    links[key] = had ? { alpha: Math.min(had.alpha, l.alpha), beta: Math.max(had.beta, l.beta) } : { alpha: l.alpha, beta: l.beta };
  }
  if (options.fillSameHost !== false) {
    for (const host of cluster.hosts) {
      const inside = (key: string) => key.split('-').every((d) => host.devices.includes(Number(d)));
      const measured = Object.entries(links).filter(([key]) => inside(key)).map(([, l]) => l);
      if (measured.length === 0) continue;
      const fill = { alpha: median(measured.map((l) => l.alpha)), beta: median(measured.map((l) => l.beta)) };
      for (const a of host.devices) for (const b of host.devices) if (a < b && !links[`${a}-${b}`]) links[`${a}-${b}`] = fill;
    }
  }

  const perParam = new Map<string, number[]>();
  const perTensor = new Map<string, number[]>();
  for (const a of profile.agents) {
    const model = modelOf(a.device);
    if (a.optimizerMsPerParam !== undefined) perParam.set(model, [...(perParam.get(model) ?? []), a.optimizerMsPerParam]);
    if (a.optimizerMsPerTensor !== undefined) perTensor.set(model, [...(perTensor.get(model) ?? []), a.optimizerMsPerTensor]);
  }
  const optimizerMsPerParam = Object.fromEntries([...perParam].map(([model, xs]) => [model, median(xs)]));
  const optimizerMsPerTensor = Object.fromEntries([...perTensor].map(([model, xs]) => [model, median(xs)]));

  return { layers, deviceFlops, links, optimizerMsPerParam, optimizerMsPerTensor, recomputeForward: profile.executor.recomputeForward };
}
