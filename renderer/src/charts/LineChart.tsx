import { useEffect, useRef, useState, useSyncExternalStore } from 'react';
import uPlot from 'uplot';
import { formatCount } from '../format';
import { formatQuantity } from './axis';
import type { Quantity } from './axis';
import { MAX_SMOOTHING, useChartSettings } from './chartSettings';
import { ChartSeries } from './chartSeries';
import { drawMarkers, markersNear } from './markers';
import type { ChartMarker } from './markers';
import { plotOptions } from './plotOptions';
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
/** The same markers (the Monitor builds a new array on every render): no need to draw again. */
const sameMarkers = (a: ChartMarker[], b: ChartMarker[]) => a === b || (a.length === b.length && a.every((m, i) => m.step === b[i].step && m.label === b[i].label && m.kind === b[i].kind));
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
 * screen follows, and markers. The plot is made once per shape and fed new data as it arrives, at most
 * once per animation frame, at the cost of the new points (./chartSeries.ts) rather than of all of them.
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
  const plot = useRef<{ chart: uPlot; schedule(force: boolean): void; resetZoom(): void } | null>(null);
  // The series' indexes and running smoothing outlive the plot (remade for log scale or a new theme).
  const [series] = useState(() => new ChartSeries());
  // What the plot's callbacks read: the newest props without remaking the plot.
  const latest = useRef({ x, y, markers, smoothing });
  latest.current = { x, y, markers, smoothing };

  useEffect(() => {
    const element = host.current;
    if (!element) return;
    let zoom: [number, number] | null = null;
    let drawStart = 0;
    let drawnColumns = 0;
    let drawnMarkers: ChartMarker[] = [];
    let frame = 0;
    let forced = false;
    const width = () => Math.max(MIN_WIDTH, element.clientWidth);
    const format = (v: number | null | undefined) => (v === null || v === undefined ? '—' : formatQuantity(quantity, v));

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
          schedule(true);
        },
        onReset: () => resetZoom(),
        hooks: {
          drawClear: [() => (drawStart = performance.now())],
          draw: [
            (u) => {
              drawnMarkers = latest.current.markers;
              drawMarkers(u, drawnMarkers);
              // The y axis took its labels' width on this draw: cut the data again for the plot's real width.
              if (Math.abs(drawnColumns - u.bbox.width / devicePixelRatio) > 4) schedule(false);
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
     * Once per animation frame however many updates came in it: take in new points (only those are
     * smoothed and indexed), decimate what is in view (all of it, or the zoomed window at full
     * resolution) and hand it to uPlot; `force` for a new window, size or scale. With no new data,
     * markers that changed are drawn again.
     */
    function schedule(force: boolean): void {
      forced ||= force;
      frame ||= requestAnimationFrame(() => {
        const wasForced = forced;
        frame = 0;
        forced = false;
        refresh(wasForced);
      });
    }
    function refresh(force: boolean): void {
      const t0 = performance.now();
      const { x: xs, y: ys, smoothing: weight, markers: newest } = latest.current;
      const columns = chart.bbox.width / devicePixelRatio || width();
      const changed = series.sync(xs, ys, smoothed ? weight : null);
      if (!changed && !force && columns === drawnColumns) {
        // uPlot has no paths to redraw before the first points.
        if (series.length > 0 && !sameMarkers(drawnMarkers, newest)) chart.redraw(false, false);
        return;
      }
      drawnColumns = columns;
      const d = series.decimate(columns, zoom, log);
      chart.setData([d.x, ...d.ys] as uPlot.AlignedData);
      const fig = figure.current;
      fig?.setAttribute('data-drawn', String(d.x.length));
      fig?.setAttribute('data-refresh-ms', (performance.now() - t0).toFixed(3));
    }
    function resetZoom(): void {
      if (!zoom) return;
      zoom = null;
      setZoomed(false);
      schedule(true);
    }

    plot.current = { chart, schedule, resetZoom };
    // The first data of a new plot is drawn at once rather than a frame later.
    refresh(true);
    const resize = new ResizeObserver(() => {
      if (Math.abs(chart.width - width()) < 1) return;
      chart.setSize({ width: width(), height: HEIGHT });
      schedule(true);
    });
    resize.observe(element);
    return () => {
      resize.disconnect();
      cancelAnimationFrame(frame);
      chart.destroy();
      plot.current = null;
      setZoomed(false);
    };
  }, [xLabel, yLabel, color, yRange, points, quantity, smoothed, log, theme]);

  // New points (the store appends to the same arrays: their lengths tell), a new weight or new markers.
  useEffect(() => plot.current?.schedule(false), [x, y, x.length, y.length, smoothing, markers]);

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
