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

/**
 * Nice ticks of a quantity in one unit (./axis.ts) for a uPlot axis: about one per 90 CSS pixels on x
 * (`horizontal`), one per 32 on y; `integer` keeps whole values only (steps).
 */
export function niceAxis(quantity: Quantity, horizontal: boolean, integer = false): Pick<uPlot.Axis, 'splits' | 'values'> {
  return {
    splits: (u, _i, min, max) => {
      const ticks = niceTicks(quantity, min, max, horizontal ? tickCount(u.bbox.width, 90) : tickCount(u.bbox.height, 32));
      return integer ? ticks.filter(Number.isInteger) : ticks;
    },
    values: (_u, splits) => tickLabels(quantity, splits),
  };
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
        ...niceAxis('number', true, true),
      },
      {
        ...axis,
        label: c.yLabel,
        size: (_u, values) => labelWidth(values),
        // A log axis keeps uPlot's decade splits.
        ...(c.log ? { values: (_u: uPlot, splits: number[]) => logTickLabels(c.quantity, splits) } : niceAxis(c.quantity, false)),
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
