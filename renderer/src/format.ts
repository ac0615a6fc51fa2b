import type { LayerSpec } from '../../engine/model/graph';

/** Small display helpers shared by the views. */
export const formatCount = (n: number) => n.toLocaleString('en-US');

export function formatShape(shape: number[]): string {
  return shape.length === 0 ? 'scalar' : shape.join('×');
}

export function formatCompact(n: number): string {
  if (n >= 1e9) return `${(n / 1e9).toFixed(1)} G`;
  if (n >= 1e6) return `${(n / 1e6).toFixed(2)} M`;
  if (n >= 1e3) return `${(n / 1e3).toFixed(1)} k`;
  return String(n);
}

export function formatDuration(ms: number): string {
  const s = Math.round(ms / 1000);
  return s < 60 ? `${s} s` : `${Math.floor(s / 60)} min ${String(s % 60).padStart(2, '0')} s`;
}

/** A one-line summary of a layer's configuration, e.g. "512 units · relu". */
export function describeSpec(spec: LayerSpec): string {
  switch (spec.kind) {
    case 'input':
      return `shape ${formatShape(spec.shape)}`;
    case 'dense':
    case 'denseNd':
      return `${spec.units} units · ${spec.activation}`;
    case 'conv2d':
      return `${spec.filters}× ${spec.kernelSize.join('×')} · ${spec.activation}`;
    case 'maxPool2d':
      return `pool ${spec.poolSize.join('×')}`;
    case 'flatten':
      return 'flatten';
    case 'reshape':
      return `to ${formatShape(spec.targetShape)}`;
    default:
      return describeFields(spec);
  }
}

/** For the many general layer kinds: their scalar and small-array fields, e.g. "filters 64 · kernelSize 3×3". */
function describeFields(spec: object): string {
  const parts: string[] = [];
  for (const [key, value] of Object.entries(spec)) {
    if (key === 'kind' || value === undefined) continue;
    if (typeof value === 'number' || typeof value === 'string') parts.push(`${key} ${value}`);
    else if (Array.isArray(value) && value.length <= 4 && value.every((v) => typeof v === 'number')) parts.push(`${key} ${value.join('×')}`);
    else if (value && typeof value === 'object' && 'kind' in value) parts.push(String((value as { kind: unknown }).kind));
  }
  return parts.slice(0, 3).join(' · ');
}

/** Milliseconds with sensible precision: 0.42 ms, 12.3 ms, 1,234 ms. */
export function formatMs(ms: number): string {
  if (ms < 10) return `${ms.toFixed(2)} ms`;
  if (ms < 1000) return `${ms.toFixed(1)} ms`;
  return `${Math.round(ms).toLocaleString('en-US')} ms`;
}

/** Bytes in binary units: 812 KiB, 45.2 MiB, 15.8 GiB. */
export function formatBytes(bytes: number): string {
  if (bytes >= 2 ** 30) return `${(bytes / 2 ** 30).toFixed(bytes >= 10 * 2 ** 30 ? 0 : 1)} GiB`;
  if (bytes >= 2 ** 20) return `${(bytes / 2 ** 20).toFixed(bytes >= 10 * 2 ** 20 ? 0 : 1)} MiB`;
  if (bytes >= 2 ** 10) return `${(bytes / 2 ** 10).toFixed(0)} KiB`;
  return `${Math.round(bytes)} B`;
}
