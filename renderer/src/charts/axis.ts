import { BYTE_UNITS, DURATION_UNITS, RATE_UNITS, formatBytes, formatDuration, formatNumber, formatPercent, formatRate, groupThousands, unitFor } from '../format';
import type { Unit } from '../format';

/**
 * What a chart's values are, for its axis and its readouts: `ms` durations in milliseconds, `bytes`,
 * `perSecond` rates (the axis label names what), `percent` values already in percent (0–100, as the
 * accuracy series holds them), `number` plain values (loss, step).
 */
export type Quantity = 'ms' | 'bytes' | 'perSecond' | 'percent' | 'number';

/** The text of one value of that quantity (readouts, the latest value beside a chart's title). */
export function formatQuantity(quantity: Quantity, value: number): string {
  switch (quantity) {
    case 'ms':
      return formatDuration(value);
    case 'bytes':
      return formatBytes(value);
    case 'perSecond':
      return formatRate(value, '');
    case 'percent':
      return formatPercent(value / 100);
    case 'number':
      return formatNumber(value);
  }
}

/** The axis unit of each quantity: one unit for a whole axis, chosen from its largest tick. */
const AXIS_UNITS: Record<Quantity, Unit[]> = {
  ms: DURATION_UNITS,
  bytes: BYTE_UNITS,
  perSecond: RATE_UNITS,
  percent: [{ name: '%', factor: 1 }],
  number: [{ name: '', factor: 1 }],
};

/** 1, 2 or 5 times a power of ten: the step of a "nice" axis with about `count` intervals over `span` (nearest, not at least). */
export function niceStep(span: number, count: number): number {
  const raw = span / Math.max(1, count);
  if (!(raw > 0) || !Number.isFinite(raw)) return 1;
  const power = 10 ** Math.floor(Math.log10(raw));
  const fraction = raw / power;
  // The nearest of 1, 2, 5, 10 on a log scale (cut at their geometric means), as d3's ticks do.
  return (fraction >= Math.sqrt(50) ? 10 : fraction >= Math.sqrt(10) ? 5 : fraction >= Math.sqrt(2) ? 2 : 1) * power;
}

/**
 * The axis unit for values up to `largest` in magnitude. Rates take a prefix only from 10,000 on
 * ("900, 950, 1,000", not "0.90k, 0.95k, 1.00k").
 */
const axisUnit = (quantity: Quantity, largest: number): Unit => unitFor((largest || 1) / (quantity === 'perSecond' ? 10 : 1), AXIS_UNITS[quantity]);

/**
 * Ticks between min and max at a nice step in the axis's own unit (5 µs, 0.5 h, 256 MiB → 0.25 GiB
 * steps are 1/2/5 in GiB), about `count` of them; an empty or reversed range gives its one value.
 */
export function niceTicks(quantity: Quantity, min: number, max: number, count = 5): number[] {
  if (!Number.isFinite(min) || !Number.isFinite(max)) return [];
  if (max <= min) return [min];
  const unit = axisUnit(quantity, Math.max(Math.abs(min), Math.abs(max)));
  const step = niceStep((max - min) / unit.factor, count);
  const first = Math.ceil(min / unit.factor / step - 1e-9);
  const last = Math.floor(max / unit.factor / step + 1e-9);
  const ticks: number[] = [];
  // Multiples of the step, computed from their index (no accumulated rounding: 0.1 + 0.2 ≠ 0.3).
  for (let k = first; k <= last && ticks.length < 1000; k++) ticks.push(Number((k * step).toPrecision(12)) * unit.factor);
  return ticks;
}

/**
 * The labels of an axis's ticks: all in one unit and with the same decimals, as many as the step
 * needs ("0.0, 0.5, 1.0, 1.5, 2.0"; "0 µs, 5 µs, 10 µs"; "0, 20k, 40k"). Units of time, bytes and
 * percent are written on every tick; rates and plain numbers leave theirs to the axis label.
 */
export function tickLabels(quantity: Quantity, ticks: number[]): string[] {
  if (ticks.length === 0) return [];
  const unit = axisUnit(quantity, Math.max(...ticks.map(Math.abs)));
  const scaled = ticks.map((t) => t / unit.factor);
  const step = ticks.length > 1 ? Math.min(...scaled.slice(1).map((t, i) => Math.abs(t - scaled[i])).filter((d) => d > 0)) : Math.abs(scaled[0]);
  const decimals = Number.isFinite(step) && step > 0 ? Math.min(12, Math.max(0, -Math.floor(Math.log10(step) + 1e-9))) : 0;
  return scaled.map((value) => {
    const magnitude = Math.abs(value).toFixed(decimals);
    const number = `${value < 0 && /[1-9]/.test(magnitude) ? '−' : ''}${groupThousands(magnitude)}`;
    if (quantity === 'perSecond' || quantity === 'number') return `${number}${unit.name}`;
    return quantity === 'percent' ? `${number}%` : `${number} ${unit.name}`;
  });
}

/** Labels for a log axis (ticks a decade or part of one apart): each value on its own, to 3 digits. */
export function logTickLabels(quantity: Quantity, ticks: (number | null)[]): string[] {
  // Number(…toPrecision) drops trailing zeros: decades read "0.01, 0.1, 1, 10", not "1.00".
  // uPlot leaves null where a tick is filtered out for lack of room.
  return ticks.map((t) => (t === null ? '' : quantity === 'number' ? (Math.abs(t) >= 1000 ? groupThousands(String(Math.round(t))) : String(Number(t.toPrecision(3)))) : formatQuantity(quantity, t)));
}
