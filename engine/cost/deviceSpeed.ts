import type { ClusterSpec } from '../cluster/spec.js';
import type { CostOptions } from './planCost.js';

/**
 * Sustained FLOP/s a device delivers for training: the measured figure when a profile has one, else
 * its datasheet-derived preset at the requested precision (fp16/bf16 tensor cores for mixed precision).
 */
export function deviceFlops(cluster: ClusterSpec, device: number, options: CostOptions): number {
  const measured = options.profile?.deviceFlops?.[device];
  if (measured) return measured;
  const flops = cluster.devices[device].flops;
  if (options.precision === 'mixed') return flops.fp16 ?? flops.bf16 ?? flops.fp32;
  return flops.fp32;
}

/** Measured link α/β between two devices when the profile has them, else undefined. */
export function measuredLink(options: CostOptions, a: number, b: number): { alpha: number; beta: number } | undefined {
  const key = a < b ? `${a}-${b}` : `${b}-${a}`;
  return options.profile?.links?.[key];
}
