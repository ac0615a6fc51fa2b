import type uPlot from 'uplot';
import type { Options } from 'uplot';
import { logTickLabels, niceTicks, tickLabels } from './axis';
import type { Quantity } from './axis';

/** Every chart of the studio moves its cursor with the others (uPlot's cursor sync, by step). */
export const SYNC_KEY = 'shoal-charts';

/** Axis text and grid colours from the theme's variables (read when a chart is made; a theme change remakes it). */
export function themeColors(): { text: string; grid: string } {
  const style = getComputedStyle(document.documentElement);
  return { text: style.getPropertyValue('--muted').trim() || '#8b98a5', grid: style.getPropertyValue('--border').trim() || '#26313c' };
}

export interface PlotConfig {
  width: number;
  height: number;
  xLabel: string;
  yLabel: string;
  quantity: Quantity;
  log: boolean;
  yRange?: (min: number, max: number) => [number, number];
  series: uPlot.Series[];
  /** The zoomed x window, or null for all of it. */
  zoom(): [number, number] | null;
  /** A drag over the plot selected this x window. */
  onZoom(from: number, to: number): void;
  /** Double-click on the plot. */
  onReset(): void;
  hooks: uPlot.Hooks.Arrays;
}

/** About one tick per `spacing` CSS pixels of the plot. */
const tickCount = (pixels: number, spacing: number) => Math.max(2, Math.floor(pixels / devicePixelRatio / spacing));
/** Room for the longest label (the axis font is 12 px; digits are about 7 px wide). */
const labelWidth = (values: string[] | undefined) => 18 + 7 * Math.max(3, ...(values ?? []).map((v) => v.length));

/**
 * uPlot's options for one studio chart: nice ticks in one unit per axis (./axis.ts), a log y axis on
 * request, the cursor synced with the other charts, drag to zoom on x and double-click to reset.
 */
export function plotOptions(c: PlotConfig): Options {
  const colors = themeColors();
  const axis = { stroke: colors.text, grid: { stroke: colors.grid, width: 1 }, ticks: { stroke: colors.grid, width: 1 }, labelSize: 16, font: '12px sans-serif', labelFont: '12px sans-serif' };
  return {
    width: c.width,
    height: c.height,
    legend: { show: false },
    cursor: {
      sync: { key: SYNC_KEY, setSeries: false },
      drag: { x: true, y: false, setScale: false },
      points: { size: 7 },
      // Double-click resets our zoom (uPlot's own would only re-fit x to the data).
      bind: { dblclick: () => () => (c.onReset(), null) },
    },
    scales: {
      x: {
        time: false,
        range: (_u, min, max) => c.zoom() ?? (min === max ? [(min ?? 0) - 1, (max ?? 0) + 1] : [min ?? 0, max ?? 1]),
      },
      y: c.log ? { distr: 3, log: 10 } : c.yRange ? { range: (_u, min, max) => c.yRange!(min ?? 0, max ?? 0) } : { auto: true },
    },
    axes: [
      {
        ...axis,
        label: c.xLabel,
        size: 34,
        // Steps are whole numbers: a deep zoom shows whole steps only.
        splits: (u, _i, min, max) => niceTicks('number', min, max, tickCount(u.bbox.width, 90)).filter(Number.isInteger),
        values: (_u, splits) => tickLabels('number', splits),
      },
      {
        ...axis,
        label: c.yLabel,
        size: (_u, values) => labelWidth(values),
        ...(c.log ? {} : { splits: (u: uPlot, _i: number, min: number, max: number) => niceTicks(c.quantity, min, max, tickCount(u.bbox.height, 32)) }),
        values: (_u, splits) => (c.log ? logTickLabels(c.quantity, splits) : tickLabels(c.quantity, splits)),
      },
    ],
    hooks: {
      ...c.hooks,
      setSelect: [
        (u) => {
          const { left, width } = u.select;
          if (width >= 3) c.onZoom(u.posToVal(left, 'x'), u.posToVal(left + width, 'x'));
          u.setSelect({ left: 0, top: 0, width: 0, height: 0 }, false);
        },
      ],
    },
    series: [{ label: c.xLabel }, ...c.series],
  };
}
