import { useEffect, useRef } from 'react';
import uPlot from 'uplot';
import type { AlignedData, Options } from 'uplot';
import { downsampleMinMax } from './downsample';

export interface LineChartProps {
  title: string;
  testId: string;
  x: number[];
  y: number[];
  xLabel: string;
  yLabel: string;
  color: string;
  /** The y range from the data's extent (e.g. percentages capped at 100); auto when absent. */
  yRange?: (min: number, max: number) => [number, number];
  /** Draw points as well as lines (sparse series such as evaluations). */
  points?: boolean;
  formatValue?: (value: number) => string;
  /** Vertical markers at x values (a resize or a lost agent at its step), each with its reason. */
  markers?: ChartMarker[];
}

export interface ChartMarker {
  step: number;
  label: string;
}

const MARKER_COLOR = '#ffd166';

/** Draw each marker as a dashed vertical line over the plot, with its label at the top. */
function drawMarkers(u: uPlot, markers: ChartMarker[]): void {
  const { ctx } = u;
  const { left, top, width, height } = u.bbox;
  ctx.save();
  ctx.strokeStyle = MARKER_COLOR;
  ctx.fillStyle = MARKER_COLOR;
  ctx.lineWidth = Math.max(1, devicePixelRatio);
  ctx.setLineDash([4 * devicePixelRatio, 3 * devicePixelRatio]);
  ctx.font = `${10 * devicePixelRatio}px sans-serif`;
  for (const marker of markers) {
    const x = Math.round(u.valToPos(marker.step, 'x', true));
    if (!(x >= left && x <= left + width)) continue;
    ctx.beginPath();
    ctx.moveTo(x, top);
    ctx.lineTo(x, top + height);
    ctx.stroke();
    ctx.fillText(marker.label.split(':')[0], x + 3 * devicePixelRatio, top + 10 * devicePixelRatio);
  }
  ctx.restore();
}

const NO_MARKERS: ChartMarker[] = [];
const AXIS = { stroke: '#9aa7b4', grid: { stroke: '#26303a', width: 1 }, ticks: { stroke: '#26303a', width: 1 } };
const HEIGHT = 170;

/** What uPlot draws: at most a few points per pixel column of the plot (min/max per column). */
const decimate = (x: number[], y: number[], width: number): AlignedData => downsampleMinMax(x, y, width);

/**
 * A live line chart (uPlot). The plot is created once and fed new data as it arrives, decimated to the
 * plot's width so 100,000 points draw as fast as a thousand.
 */
export function LineChart(props: LineChartProps) {
  const host = useRef<HTMLDivElement>(null);
  const plot = useRef<uPlot | null>(null);
  const { title, testId, x, y, xLabel, yLabel, color, yRange, points, formatValue } = props;
  const markers = props.markers ?? NO_MARKERS;
  const latest = useRef({ x, y });
  latest.current = { x, y };
  const latestMarkers = useRef(markers);
  latestMarkers.current = markers;

  useEffect(() => {
    const element = host.current;
    if (!element) return;
    const options: Options = {
      width: Math.max(200, element.clientWidth),
      height: HEIGHT,
      legend: { show: false },
      cursor: { drag: { x: false, y: false } },
      scales: { x: { time: false }, y: yRange ? { range: (_u, min, max) => yRange(min ?? 0, max ?? 0) } : { auto: true } },
      axes: [
        { ...AXIS, label: xLabel, labelSize: 18, size: 36 },
        { ...AXIS, label: yLabel, labelSize: 18, size: 56, values: formatValue ? (_u, ticks) => ticks.map(formatValue) : undefined },
      ],
      hooks: { draw: [(u) => drawMarkers(u, latestMarkers.current)] },
      series: [{ label: xLabel }, { label: yLabel, stroke: color, width: 2, points: { show: points ?? false, size: 6, fill: color } }],
    };
    const width = () => Math.max(200, element.clientWidth);
    const chart = new uPlot(options, decimate(latest.current.x, latest.current.y, width()), element);
    plot.current = chart;
    const resize = new ResizeObserver(() => {
      chart.setSize({ width: width(), height: HEIGHT });
      chart.setData(decimate(latest.current.x, latest.current.y, chart.bbox.width / devicePixelRatio || width()));
    });
    resize.observe(element);
    return () => {
      resize.disconnect();
      chart.destroy();
      plot.current = null;
    };
  }, [xLabel, yLabel, color, yRange, points, formatValue]);

  useEffect(() => {
    const chart = plot.current;
    if (chart) chart.setData(decimate(x, y, chart.bbox.width / devicePixelRatio || chart.width));
  }, [x, y]);

  useEffect(() => {
    // Only once there is data: uPlot has no paths to redraw before the first points.
    if (latest.current.x.length > 0) plot.current?.redraw();
  }, [markers]);

  const last = y.length > 0 ? y[y.length - 1] : undefined;
  return (
    <figure className="chart" data-testid={testId} data-points={x.length} data-markers={markers.length} aria-label={title}>
      <figcaption className="chart__title">
        <span>{title}</span>
        <span className="chart__value">{last === undefined ? '—' : formatValue ? formatValue(last) : last.toPrecision(4)}</span>
      </figcaption>
      <div ref={host} className="chart__plot" />
      {x.length === 0 && <div className="chart__empty">No data yet</div>}
      {markers.length > 0 && (
        <ul className="chart__markers" data-testid={`${testId}-markers`}>
          {markers.map((m) => (
            <li key={`${m.step}-${m.label}`}>
              ┆ step {m.step}: {m.label}
            </li>
          ))}
        </ul>
      )}
    </figure>
  );
}
