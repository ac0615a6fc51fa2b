import type { LayerSpec } from '../../engine/model/graph';

/**
 * The studio's one formatter for numbers people read: durations (ns … h), bytes (B … TiB), rates,
 * percentages, plain values and metrics, and the "nice" axis ticks of every chart (charts/axis.ts).
 * Every function takes a number in the unit named (milliseconds, bytes, per second, a fraction) and
 * returns text that never depends on the machine's locale: thousands grouped with commas, a real
 * minus sign, three significant digits unless said otherwise, and "—" for NaN and ±Infinity.
 * A value that rounds up to the next unit is written in that unit (999.95 ms → "1.00 s").
 */

/** What a value that is not a number (NaN, ±Infinity, a missing value) reads as. */
export const NOT_A_NUMBER = '—';
const MINUS = '−';

/** Commas between thousands of the integer part: "1234567.5" → "1,234,567.5". */
export function groupThousands(text: string): string {
  const [int, frac] = text.split('.');
  const grouped = int.replace(/\B(?=(\d{3})+(?!\d))/g, ',');
  return frac === undefined ? grouped : `${grouped}.${frac}`;
}

/**
 * A non-negative finite value to `digits` significant digits, keeping trailing zeros ("1.00", "12.3",
 * "123", "1,234"): integers are never cut ("12,345" at 3 digits).
 */
export function significant(value: number, digits = 3): string {
  if (value === 0) return '0';
  const magnitude = Math.floor(Math.log10(value));
  const decimals = Math.max(0, digits - 1 - magnitude);
  let text = value.toFixed(Math.min(100, decimals));
  // 9.996 at 2 decimals is "10.00": one digit too many once rounding carried into a new magnitude.
  if (decimals > 0 && Number(text) >= 10 ** (magnitude + 1)) text = value.toFixed(decimals - 1);
  return groupThousands(text);
}

/** Sign and magnitude: the finite check and the minus sign done once for every formatter. */
function signed(value: number, format: (magnitude: number) => string): string {
  if (!Number.isFinite(value)) return NOT_A_NUMBER;
  const text = format(Math.abs(value));
  // A negative that rounds to zero reads as zero, not "−0" (nor "−<1 ns").
  return value < 0 && /^[\d.,]*[1-9]/.test(text) ? `${MINUS}${text}` : text;
}

/** A unit of a scale: its name and how many base units (ms, bytes, 1/s) it holds. */
export interface Unit {
  name: string;
  factor: number;
}

/** Shorter durations than a minute, in milliseconds; minutes and hours are written "1 min 05 s", "5 h 53 min". */
export const DURATION_UNITS: Unit[] = [
  { name: 'ns', factor: 1e-6 },
  { name: 'µs', factor: 1e-3 },
  { name: 'ms', factor: 1 },
  { name: 's', factor: 1e3 },
  { name: 'min', factor: 6e4 },
  { name: 'h', factor: 3.6e6 },
];
export const BYTE_UNITS: Unit[] = ['B', 'KiB', 'MiB', 'GiB', 'TiB', 'PiB'].map((name, i) => ({ name, factor: 1024 ** i }));
/** SI prefixes for counts per second: 950, 12.3k, 4.50M. */
export const RATE_UNITS: Unit[] = ['', 'k', 'M', 'G', 'T'].map((name, i) => ({ name, factor: 1000 ** i }));

/** The largest unit not above the value (the smallest for values below it). */
export function unitFor(value: number, units: Unit[]): Unit {
  let chosen = units[0];
  for (const unit of units) if (Math.abs(value) >= unit.factor) chosen = unit;
  return chosen;
}

/**
 * A magnitude in the largest unit that keeps it at or above 1, to `digits` significant digits; when
 * the rounded number reaches the next unit it is written in that one ("1,024 B" → "1.00 KiB").
 * `join` puts number and unit name together.
 */
function scaled(magnitude: number, units: Unit[], digits: number, join: (number: string, unit: string) => string, integerBase = false): string {
  let index = units.indexOf(unitFor(magnitude, units));
  for (;;) {
    const unit = units[index];
    const inUnit = magnitude / unit.factor;
    const text = integerBase && index === 0 ? groupThousands(String(Math.round(inUnit))) : significant(inUnit, digits);
    const next = units[index + 1];
    if (next && Number(text.replace(/,/g, '')) * unit.factor >= next.factor) {
      index++;
      continue;
    }
    return join(text, unit.name);
  }
}

const withSpace = (number: string, unit: string) => (unit ? `${number} ${unit}` : number);

/**
 * A duration given in milliseconds: "0 ms", "250 ns", "12.3 µs", "1.00 ms", "12.3 s", "1 min 05 s",
 * "5 h 53 min". Below a nanosecond: "<1 ns".
 */
export function formatDuration(ms: number): string {
  return signed(ms, (m) => {
    if (m === 0) return '0 ms';
    if (m < 1e-6) return '<1 ns';
    const short = scaled(m, DURATION_UNITS.slice(0, 4), 3, withSpace);
    if (!short.endsWith(' s') || Number(short.slice(0, -2).replace(/,/g, '')) < 60) return short;
    const seconds = Math.round(m / 1000);
    if (seconds < 3600) return `${Math.floor(seconds / 60)} min ${String(seconds % 60).padStart(2, '0')} s`;
    const minutes = Math.round(m / 6e4);
    return `${groupThousands(String(Math.floor(minutes / 60)))} h ${String(minutes % 60).padStart(2, '0')} min`;
  });
}

/** A step time or any other duration in milliseconds (the same as formatDuration). */
export const formatMs = formatDuration;

/** Bytes in binary units: "512 B", "1.00 KiB", "812 KiB", "45.2 MiB", "15.8 GiB". */
export function formatBytes(bytes: number): string {
  return signed(bytes, (b) => scaled(b, BYTE_UNITS, 3, withSpace, true));
}

/** Bytes per second: "45.2 MiB/s". */
export function formatByteRate(bytesPerSecond: number): string {
  const text = formatBytes(bytesPerSecond);
  return text === NOT_A_NUMBER ? text : `${text}/s`;
}

/**
 * Things per second: "0.250 samples/s", "950 samples/s", "12,345 samples/s" (whole and exact up to a
 * million, where digits still read at a glance), then "4.50M samples/s"; `unit` '' for the number alone.
 */
export function formatRate(perSecond: number, unit = 'samples/s'): string {
  const join = (n: string, prefix: string) => `${n}${prefix}${unit ? ` ${unit}` : ''}`;
  return signed(perSecond, (r) => (r >= 999_999.5 ? scaled(r, RATE_UNITS.slice(2), 3, join) : r >= 999.5 ? join(groupThousands(String(Math.round(r))), '') : join(significant(r, 3), '')));
}

/** A fraction as a percentage: 0.334 → "33.4%" (`decimals` after the point, 1 unless said). */
export function formatPercent(fraction: number, decimals = 1): string {
  return signed(fraction * 100, (p) => `${groupThousands(p.toFixed(decimals))}%`);
}

/**
 * A plain value such as a loss: `digits` significant digits (4 unless said), in exponent form outside
 * 0.0001 … 1e9 ("2.303", "0.01234", "1.235e-7").
 */
export function formatNumber(value: number, digits = 4): string {
  return signed(value, (v) => (v !== 0 && (v < 1e-4 || v >= 1e9) ? v.toExponential(digits - 1).replace('e+', 'e') : significant(v, digits)));
}

/** A count: "1,234,567" (rounded to an integer). */
export const formatCount = (n: number) => signed(n, (v) => groupThousands(String(Math.round(v))));

/** Large counts such as parameters: "950", "12.3 k", "4.56 M", "1.2 G". */
export function formatCompact(n: number): string {
  return signed(n, (v) => scaled(v, RATE_UNITS, 3, (num, prefix) => (prefix ? `${num} ${prefix}` : num), true));
}

/** A validation metric for people: accuracies as percentages, errors and losses to 4 decimals. */
export function formatMetric(name: string, value: number): string {
  if (!Number.isFinite(value)) return NOT_A_NUMBER;
  return /(^|_)(acc|accuracy)$|accuracy/i.test(name) ? formatPercent(value, 2) : signed(value, (v) => v.toFixed(4));
}

export function formatShape(shape: number[]): string {
  return shape.length === 0 ? 'scalar' : shape.join('×');
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
