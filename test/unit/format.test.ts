import { describe, expect, it } from 'vitest';
import { formatByteRate, formatBytes, formatCompact, formatCount, formatDuration, formatMetric, formatNumber, formatPercent, formatRate, significant } from '../../renderer/src/format.js';
import { formatQuantity, logTickLabels, niceStep, niceTicks, tickLabels } from '../../renderer/src/charts/axis.js';

describe('durations', () => {
  it('picks µs, ms, s, min and h with three significant digits', () => {
    expect(formatDuration(0.0123)).toBe('12.3 µs');
    expect(formatDuration(0.42)).toBe('420 µs');
    expect(formatDuration(1)).toBe('1.00 ms');
    expect(formatDuration(12.34)).toBe('12.3 ms');
    expect(formatDuration(123.4)).toBe('123 ms');
    expect(formatDuration(12_345)).toBe('12.3 s');
    expect(formatDuration(65_000)).toBe('1 min 05 s');
    expect(formatDuration(21_185_308)).toBe('5 h 53 min');
    expect(formatDuration(1e12)).toBe('277,777 h 47 min');
  });

  it('writes zero, sub-µs and sub-ns values', () => {
    expect(formatDuration(0)).toBe('0 ms');
    expect(formatDuration(-0)).toBe('0 ms');
    expect(formatDuration(0.00025)).toBe('250 ns');
    expect(formatDuration(1e-12)).toBe('<1 ns');
  });

  it('moves to the next unit when rounding reaches it', () => {
    expect(formatDuration(999.95)).toBe('1.00 s');
    expect(formatDuration(999.4)).toBe('999 ms');
    expect(formatDuration(0.99996)).toBe('1.00 ms');
    expect(formatDuration(0.0009996)).toBe('1.00 µs');
    expect(formatDuration(9.996)).toBe('10.0 ms');
    expect(formatDuration(59_960)).toBe('1 min 00 s');
    expect(formatDuration(3_599_600)).toBe('1 h 00 min');
  });

  it('signs negatives and dashes NaN and infinities', () => {
    expect(formatDuration(-1500)).toBe('−1.50 s');
    expect(formatDuration(-1e-13)).toBe('<1 ns');
    expect(formatDuration(NaN)).toBe('—');
    expect(formatDuration(Infinity)).toBe('—');
    expect(formatDuration(-Infinity)).toBe('—');
  });
});

describe('bytes, rates, percentages, values', () => {
  it('bytes in binary units, whole bytes below a KiB', () => {
    expect(formatBytes(0)).toBe('0 B');
    expect(formatBytes(512.4)).toBe('512 B');
    expect(formatBytes(1023.6)).toBe('1.00 KiB');
    expect(formatBytes(1536)).toBe('1.50 KiB');
    expect(formatBytes(45.2 * 2 ** 20)).toBe('45.2 MiB');
    expect(formatBytes(2 ** 20 - 1)).toBe('1.00 MiB');
    expect(formatBytes(15.8 * 2 ** 30)).toBe('15.8 GiB');
    expect(formatBytes(3 * 2 ** 60)).toBe('3,072 PiB');
    expect(formatBytes(-2048)).toBe('−2.00 KiB');
    expect(formatBytes(NaN)).toBe('—');
    expect(formatByteRate(1.5 * 2 ** 20)).toBe('1.50 MiB/s');
    expect(formatByteRate(Infinity)).toBe('—');
  });

  it('rates with SI prefixes', () => {
    expect(formatRate(0)).toBe('0 samples/s');
    expect(formatRate(950.4)).toBe('950 samples/s');
    expect(formatRate(999.7)).toBe('1,000 samples/s');
    expect(formatRate(999_999.7)).toBe('1.00M samples/s');
    expect(formatRate(12_345)).toBe('12,345 samples/s');
    expect(formatRate(4.5e6, '')).toBe('4.50M');
    expect(formatRate(0.25)).toBe('0.250 samples/s');
    expect(formatRate(-Infinity)).toBe('—');
  });

  it('percentages of fractions, without a negative zero', () => {
    expect(formatPercent(0.334)).toBe('33.4%');
    expect(formatPercent(1)).toBe('100.0%');
    expect(formatPercent(0.98765, 2)).toBe('98.77%');
    expect(formatPercent(-0.0001)).toBe('0.0%');
    expect(formatPercent(-0.5)).toBe('−50.0%');
    expect(formatPercent(NaN)).toBe('—');
  });

  it('plain values, counts and metrics', () => {
    expect(formatNumber(2.302585)).toBe('2.303');
    expect(formatNumber(0.012345)).toBe('0.01235');
    expect(formatNumber(0)).toBe('0');
    expect(formatNumber(1.2345e-7)).toBe('1.235e-7');
    expect(formatNumber(2.5e12)).toBe('2.500e12');
    expect(formatNumber(-3.14159)).toBe('−3.142');
    expect(formatCount(21_185_308.4)).toBe('21,185,308');
    expect(formatCompact(401_920)).toBe('402 k');
    expect(formatCompact(999.6)).toBe('1.00 k');
    expect(formatCompact(1.2e9)).toBe('1.20 G');
    expect(formatMetric('accuracy', 0.98765)).toBe('98.77%');
    expect(formatMetric('mae', 0.123456)).toBe('0.1235');
    expect(formatMetric('mae', NaN)).toBe('—');
    expect(significant(12_345, 3)).toBe('12,345');
  });
});

describe('axes', () => {
  it('steps of 1, 2 or 5 times a power of ten', () => {
    expect(niceStep(10, 5)).toBe(2);
    expect(niceStep(0.03, 3)).toBe(0.01);
    expect(niceStep(7, 2)).toBe(5);
    expect(niceStep(0, 4)).toBe(1);
  });

  it('a loss axis reads 0.0 … 2.0, not 0.000 / 2.000', () => {
    const ticks = niceTicks('number', 0, 2.1, 4);
    expect(ticks).toEqual([0, 0.5, 1, 1.5, 2]);
    expect(tickLabels('number', ticks)).toEqual(['0.0', '0.5', '1.0', '1.5', '2.0']);
  });

  it('a short duration axis switches to µs', () => {
    const ticks = niceTicks('ms', 0, 0.012, 3);
    expect(tickLabels('ms', ticks)).toEqual(['0 µs', '5 µs', '10 µs']);
  });

  it('a long duration axis is in hours with nice steps in hours', () => {
    const ticks = niceTicks('ms', 0, 21_185_308, 3);
    expect(tickLabels('ms', ticks)).toEqual(['0 h', '2 h', '4 h']);
  });

  it('bytes, rates and percent axes', () => {
    expect(tickLabels('bytes', niceTicks('bytes', 0, 3 * 2 ** 30, 3))).toEqual(['0 GiB', '1 GiB', '2 GiB', '3 GiB']);
    expect(tickLabels('perSecond', niceTicks('perSecond', 0, 45_000, 3))).toEqual(['0k', '20k', '40k']);
    expect(tickLabels('perSecond', niceTicks('perSecond', 880, 1010, 3))).toEqual(['900', '950', '1,000']);
    expect(tickLabels('percent', niceTicks('percent', 85, 100, 3))).toEqual(['85%', '90%', '95%', '100%']);
    expect(tickLabels('number', niceTicks('number', -1, 1, 2))).toEqual(['−1', '0', '1']);
    expect(tickLabels('number', niceTicks('number', 0, 100_000, 4))).toEqual(['0', '20,000', '40,000', '60,000', '80,000', '100,000']);
  });

  it('degenerate ranges and log labels', () => {
    expect(niceTicks('number', 1, 1)).toEqual([1]);
    expect(niceTicks('number', NaN, 1)).toEqual([]);
    expect(tickLabels('number', [])).toEqual([]);
    expect(logTickLabels('number', [0.01, 0.1, 1, 10, 1000])).toEqual(['0.01', '0.1', '1', '10', '1,000']);
    expect(formatQuantity('percent', 97.25)).toBe('97.3%');
    expect(formatQuantity('perSecond', 1234)).toBe('1,234');
  });
});
