import { useEffect, useRef, useState, useSyncExternalStore } from 'react';
import uPlot from 'uplot';
import { formatCount } from '../format';
import { formatQuantity } from './axis';
import type { Quantity } from './axis';
import { MAX_SMOOTHING, useChartSettings } from './chartSettings';
import { decimate, lowerBound } from './downsample';
import { drawMarkers, markersNear } from './markers';
import type { ChartMarker } from './markers';
import { plotOptions } from './plotOptions';
import { smoothEma } from './smoothing';
import './charts.css';

export type { ChartMarker } from './markers';
export { jobMarkers } from './markers';

export interface LineChartProps {
  title: string;
  testId: string;
  x: number[];
  y: number[];
  xLabel: string;
  yLabel: string;
  color: string;
  /** What the values are (axis units and readouts): plain numbers unless said. */
  quantity?: Quantity;
  /** The y range from the data's extent (e.g. percentages capped at 100); auto when absent. */
  yRange?: (min: number, max: number) => [number, number];
  /** Draw points as well as lines (sparse series such as evaluations); such series are not smoothed. */
  points?: boolean;
  /** Resizes, lost agents, restarts (vertical lines) and evaluations (ticks on the x axis). */
  markers?: ChartMarker[];
}

const NO_MARKERS: ChartMarker[] = [];
const HEIGHT = 170;
const MIN_WIDTH = 200;

/** The document's theme (`data-theme`), so charts are remade with its colours when it changes. */
function subscribeTheme(onChange: () => void): () => void {
  const observer = new MutationObserver(onChange);
  observer.observe(document.documentElement, { attributes: true, attributeFilter: ['data-theme'] });
  return () => observer.disconnect();
}
const useTheme = () => useSyncExternalStore(subscribeTheme, () => document.documentElement.dataset.theme ?? '');

/** Half-transparent: the raw series drawn faintly behind its smoothed line, as TensorBoard does. */
const faint = (color: string) => (/^#[0-9a-f]{6}$/i.test(color) ? `${color}55` : color);

/**
 * A line chart (uPlot) for series up to hundreds of thousands of points: decimated per pixel column
 * (min/max kept) over what is in view, TensorBoard smoothing shared by all charts, a log y axis, drag
 * to zoom and double-click (or the button) to reset, a readout under the cursor that every chart on
 * screen follows, and markers. The plot is made once per shape and fed new data as it arrives.
 */
export function LineChart(props: LineChartProps) {
  const { title, testId, x, y, xLabel, yLabel, color, yRange, points } = props;
  const quantity = props.quantity ?? 'number';
  const markers = props.markers ?? NO_MARKERS;
  const smoothing = useChartSettings((s) => s.smoothing);
  const setSmoothing = useChartSettings((s) => s.setSmoothing);
  const [log, setLog] = useState(false);
  const [zoomed, setZoomed] = useState(false);
  const theme = useTheme();
  const smoothed = !points && smoothing > 0;

  const host = useRef<HTMLDivElement>(null);
  const figure = useRef<HTMLElement>(null);
  const readout = useRef<HTMLSpanElement>(null);
  const plot = useRef<{ chart: uPlot; refresh(force?: boolean): void; resetZoom(): void } | null>(null);
  // What the plot's callbacks read: the newest props without remaking the plot.
  const latest = useRef({ x, y, markers, smoothing });
  latest.current = { x, y, markers, smoothing };

  useEffect(() => {
    const element = host.current;
    if (!element) return;
    let zoom: [number, number] | null = null;
    let cache: { x: number[]; y: number[]; weight: number; values: Float64Array } | null = null;
    let drawStart = 0;
    let shown: { x: number[]; y: number[]; smoothing: number; columns: number } | null = null;
    const width = () => Math.max(MIN_WIDTH, element.clientWidth);
    const format = (v: number | null | undefined) => (v === null || v === undefined ? '—' : formatQuantity(quantity, v));

    /** The smoothed series, computed again only when the data or the weight changed. */
    const smoothedSeries = (): Float64Array => {
      const { x: xs, y: ys, smoothing: weight } = latest.current;
      if (!cache || cache.x !== xs || cache.y !== ys || cache.weight !== weight) cache = { x: xs, y: ys, weight, values: smoothEma(ys, weight) };
      return cache.values;
    };

    const showReadout = (u: uPlot) => {
      const el = readout.current;
      if (!el) return;
      const idx = u.cursor.idx;
      if (idx === null || idx === undefined || (u.cursor.left ?? -1) < 0 || u.data[0].length === 0) {
        el.textContent = '';
        return;
      }
      const raw = u.data[1][idx];
      const value = smoothed ? u.data[2][idx] : raw;
      const near = markersNear(u, latest.current.markers, u.valToPos(u.data[0][idx], 'x'));
      el.textContent = [`${xLabel} ${formatCount(u.data[0][idx])}: ${format(value)}${smoothed ? ` (raw ${format(raw)})` : ''}`, ...near.map((m) => m.label)].join(' · ');
    };

    const chart = new uPlot(
      plotOptions({
        width: width(),
        height: HEIGHT,
        xLabel,
        yLabel,
        quantity,
        log,
        yRange,
        series: smoothed
          ? [
              { label: `${yLabel} (raw)`, stroke: faint(color), width: 1 },
              { label: yLabel, stroke: color, width: 2 },
            ]
          : [{ label: yLabel, stroke: color, width: 2, points: { show: points ?? false, size: 6, fill: color } }],
        zoom: () => zoom,
        onZoom(from, to) {
          zoom = [Math.min(from, to), Math.max(from, to)];
          setZoomed(true);
          refresh();
        },
        onReset: () => resetZoom(),
        hooks: {
          drawClear: [() => (drawStart = performance.now())],
          draw: [
            (u) => {
              drawMarkers(u, latest.current.markers);
              // The y axis took its labels' width on this draw: cut the data again for the plot's real width.
              if (shown && Math.abs(shown.columns - u.bbox.width / devicePixelRatio) > 4) queueMicrotask(() => refresh(false));
              // What was drawn, for tests and the chart benchmark: the draw's time and the scales' ranges.
              const fig = figure.current;
              fig?.setAttribute('data-draw-ms', (performance.now() - drawStart).toFixed(3));
              for (const key of ['x', 'y']) {
                fig?.setAttribute(`data-${key}-min`, String(u.scales[key].min));
                fig?.setAttribute(`data-${key}-max`, String(u.scales[key].max));
              }
            },
          ],
          setCursor: [showReadout],
        },
      }),
      [[]],
      element,
    );

    /**
     * Decimate what is in view (all of it, or the zoomed window at full resolution) and hand it to
     * uPlot; `force` for a new window or size, otherwise only when the data or the weight changed.
     */
    function refresh(force = true): void {
      const t0 = performance.now();
      const { x: xs, y: ys, smoothing: weight } = latest.current;
      const columns = chart.bbox.width / devicePixelRatio || width();
      if (!force && shown && shown.x === xs && shown.y === ys && shown.smoothing === weight && shown.columns === columns) return;
      shown = { x: xs, y: ys, smoothing: weight, columns };
      const n = Math.min(xs.length, ys.length);
      const lo = zoom ? Math.max(0, lowerBound(xs, zoom[0]) - 1) : 0;
      const hi = zoom ? Math.min(n, lowerBound(xs, zoom[1]) + 1) : n;
      const d = decimate(xs, smoothed ? [ys, smoothedSeries()] : [ys], columns, lo, hi, log);
      chart.setData([d.x, ...d.ys] as uPlot.AlignedData);
      const fig = figure.current;
      fig?.setAttribute('data-drawn', String(d.x.length));
      fig?.setAttribute('data-refresh-ms', (performance.now() - t0).toFixed(3));
    }
    function resetZoom(): void {
      if (!zoom) return;
      zoom = null;
      setZoomed(false);
      refresh();
    }

    plot.current = { chart, refresh, resetZoom };
    refresh();
    const resize = new ResizeObserver(() => {
      if (Math.abs(chart.width - width()) < 1) return;
      chart.setSize({ width: width(), height: HEIGHT });
      refresh();
    });
    resize.observe(element);
    return () => {
      resize.disconnect();
      chart.destroy();
      plot.current = null;
      setZoomed(false);
    };
  }, [xLabel, yLabel, color, yRange, points, quantity, smoothed, log, theme]);

  // New data or a new smoothing weight: decimate again (the plot stays).
  useEffect(() => plot.current?.refresh(false), [x, y, smoothing]);
  useEffect(() => {
    // Only once there is data: uPlot has no paths to redraw before the first points.
    if (latest.current.x.length > 0) plot.current?.chart.redraw(false, false);
  }, [markers]);

  const last = y.length > 0 ? y[y.length - 1] : undefined;
  const generations = markers.filter((m) => m.kind !== 'eval');
  return (
    <figure
      ref={figure}
      className="chart"
      data-testid={testId}
      data-points={x.length}
      data-markers={generations.length}
      data-evaluations={markers.length - generations.length}
      data-smoothing={points ? 0 : smoothing}
      data-log={log}
      data-zoomed={zoomed}
      aria-label={title}
    >
      <figcaption className="chart__title">
        <span>{title}</span>
        <span className="chart__value">{last === undefined ? '—' : formatQuantity(quantity, last)}</span>
      </figcaption>
      <div className="chart-tools" role="toolbar" aria-label={`${title} chart`}>
        {!points && (
          <label className="chart-tools__smoothing" title="Exponential moving average with debiasing, as TensorBoard smooths; the raw line stays faint behind">
            Smoothing
            <input type="range" min={0} max={MAX_SMOOTHING} step={0.001} value={smoothing} onChange={(e) => setSmoothing(Number(e.target.value))} data-testid={`${testId}-smoothing`} />
            <output>{smoothing.toFixed(2)}</output>
          </label>
        )}
        <label className="chart-tools__toggle" title="Logarithmic y axis (values ≤ 0 are left out)">
          <input type="checkbox" checked={log} onChange={(e) => setLog(e.target.checked)} data-testid={`${testId}-log`} />
          log
        </label>
        <button type="button" className="chart-tools__reset" disabled={!zoomed} onClick={() => plot.current?.resetZoom()} data-testid={`${testId}-reset`} title="Show every step (or double-click the plot); drag across the plot to zoom">
          Reset
        </button>
      </div>
      <div ref={host} className="chart__plot" />
      <div className="chart-readout" aria-live="off">
        <span ref={readout} data-testid={`${testId}-readout`} />
      </div>
      {x.length === 0 && <div className="chart__empty">No data yet</div>}
      {generations.length > 0 && (
        <ul className="chart__markers" data-testid={`${testId}-markers`}>
          {generations.map((m) => (
            <li key={`${m.step}-${m.label}`}>
              ┆ step {formatCount(m.step)}: {m.label}
            </li>
          ))}
        </ul>
      )}
    </figure>
  );
}
