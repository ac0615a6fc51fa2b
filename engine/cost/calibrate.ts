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

/** Layer timings shorter than this alone do not enter the contention estimate. */
const CONTENTION_FLOOR_MS = 1;

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
 * the executor runs a stage; how much agents sharing a host slow each other down; the gradient
 * all-reduce as the runtime runs it; and the fixed cost of a step's round trip to the coordinator.
 */
export function calibrate(profile: JobProfile, cluster: ClusterSpec, options: CalibrateOptions = {}): CostProfile {
  const modelOf = (device: number) => cluster.devices[device]?.model ?? `device ${device}`;

  // Layers: fit every (layer, device model) over all agents and batch sizes; keep the device model with
  // the most points. Timings taken alone are preferred: agents sharing cores are priced by `contention`.
  const alone = (t: LayerTiming) => (t.concurrent ?? 1) <= 1;
  const solo = profile.layers.filter(alone);
  const soloIds = new Set(solo.map((t) => t.id));
  const fitted = [...solo, ...profile.layers.filter((t) => !alone(t) && !soloIds.has(t.id))];
  const groups = new Map<string, { id: string; device: string; timings: LayerTiming[] }>();
  for (const t of fitted) {
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
    // The median per batch size, for interpolation between the sizes that were timed.
    const sizes = [...new Set(g.timings.map((t) => t.batch))].sort((a, b) => a - b);
    const points = sizes.map((batch) => {
      const at = g.timings.filter((t) => t.batch === batch);
      return { batch, forwardMs: median(at.map((t) => t.forwardMs)), backwardMs: median(at.map((t) => t.backwardMs)) };
    });
    layers[g.id] = {
      device: g.device,
      forwardMsPerSample: forward.perSample,
      backwardMsPerSample: backward.perSample,
      forwardMsPerCall: forward.perCall,
      backwardMsPerCall: backward.perCall,
      points,
    };
  }

  // Contention: the same layers at the same batch sizes timed with k agents busy at once, over their
  // times alone. The median of those ratios, over the timings of at least CONTENTION_FLOOR_MS alone
  // (tiny calls are mostly fixed overhead), so that a burst of other work on the machine during part
  // of a round does not decide it.
  const contention: Record<number, number> = {};
  const key = (t: LayerTiming) => `${t.id}\u0000${t.batch}\u0000${modelOf(t.device)}`;
  const soloMs = new Map<string, number[]>();
  for (const t of solo) soloMs.set(key(t), [...(soloMs.get(key(t)) ?? []), t.forwardMs + t.backwardMs]);
  for (const k of [...new Set(profile.layers.map((t) => t.concurrent ?? 1))].filter((k) => k > 1)) {
    const shared = new Map<string, number[]>();
    for (const t of profile.layers.filter((t) => t.concurrent === k)) shared.set(key(t), [...(shared.get(key(t)) ?? []), t.forwardMs + t.backwardMs]);
    const ratios: number[] = [];
    for (const [at, ms] of shared) {
      const own = soloMs.get(at);
      if (own && median(own) >= CONTENTION_FLOOR_MS) ratios.push(median(ms) / median(own));
    }
    if (ratios.length) contention[k] = Math.max(1, median(ratios));
  }

  // The gradient hand-over every step makes (copy out of the tensors into a flat bucket, and back),
  // timed alone; and the all-reduce of a group less those copies, as a line through the median time
  // per size read as the α and β of a ring of the measured members (2(n−1) latencies, 2(n−1)/n bytes).
  const timed = profile.allReduce ?? [];
  const lineOf = (members: number, less: (bytes: number) => number = () => 0) => {
    const bySize = new Map<number, number[]>();
    for (const m of timed.filter((m) => m.members === members)) bySize.set(m.bytes, [...(bySize.get(m.bytes) ?? []), m.ms]);
    return bySize.size ? fitPerCall([...bySize].map(([bytes, ms]) => ({ batch: bytes, ms: Math.max(0, median(ms) - less(bytes)) }))) : undefined;
  };
  const copy = lineOf(1);
  const gradientCopy = copy && copy.perSample > 0 ? { msPerBucket: copy.perCall, msPerByte: copy.perSample } : undefined;
  let allReduce: CostProfile['allReduce'];
  const n = Math.max(0, ...timed.map((m) => m.members));
  const ring = n > 1 ? lineOf(n, (bytes) => (gradientCopy ? gradientCopy.msPerBucket + bytes * gradientCopy.msPerByte : 0)) : undefined;
  if (ring && ring.perSample > 0) {
    allReduce = { alpha: ring.perCall / 1000 / (2 * (n - 1)), beta: (2 * (n - 1)) / n / (ring.perSample / 1000), members: n };
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

  // A synchronous step starts with the coordinator's message and ends with the agents' replies: about
  // one round trip between them, measured by the clock synchronisation.
  const rtts = profile.agents.map((a) => a.clockRttMs).filter((ms) => ms > 0);
  const stepOverheadMs = rtts.length ? median(rtts) : undefined;

  return {
    layers,
    deviceFlops,
    links,
    optimizerMsPerParam,
    optimizerMsPerTensor,
    recomputeForward: profile.executor.recomputeForward,
    ...(Object.keys(contention).length ? { contention } : {}),
    ...(allReduce ? { allReduce } : {}),
    ...(gradientCopy ? { gradientCopy } : {}),
    ...(stepOverheadMs !== undefined ? { stepOverheadMs } : {}),
  };
}

/**
 * The part of a step the per-layer timings do not see (gathering the batch, tensor creation, message
 * handling, garbage collection), fitted from the profiling job itself: the median step time it
 * measured for its own plan less what the calibrated model predicts for that plan. It replaces the
 * round-trip estimate of `stepOverheadMs` (which it includes). Plans whose step times are being
 * predicted must not be used here.
 */
export function fitStepOverhead(profile: CostProfile, measuredStepMs: number, predict: (profile: CostProfile) => number): CostProfile {
  const without = { ...profile, stepOverheadMs: 0 };
  return { ...profile, stepOverheadMs: Math.max(0, measuredStepMs - predict(without)) };
}

