import { useEffect, useRef } from 'react';
import uPlot from 'uplot';
import type { AlignedData, Options } from 'uplot';
import { niceAxis } from '../charts/plotOptions';

export interface OverlaySeries {
  /** Unique per series (the run id); labels (run names) may repeat. */
  key: string;
  label: string;
  color: string;
  x: number[];
  y: number[];
}

/** Series on one x axis (the union of their steps; gaps where a run has no point). */
export function alignSeries(series: OverlaySeries[]): AlignedData {
  const xs = [...new Set(series.flatMap((s) => s.x))].sort((a, b) => a - b);
  const index = new Map(xs.map((x, i) => [x, i]));
  const ys = series.map((s) => {
    const column: Array<number | null> = new Array(xs.length).fill(null);
    s.x.forEach((x, i) => (column[index.get(x)!] = s.y[i]));
    return column;
  });
  return [xs, ...ys] as AlignedData;
}

const AXIS = { stroke: '#8b98a5', grid: { stroke: 'rgba(128,128,128,0.2)', width: 1 }, ticks: { stroke: 'rgba(128,128,128,0.2)', width: 1 } };

/** Several runs' curves overlaid (uPlot), with a legend under the plot naming each run (wrapping, never over the title). */
export function OverlayChart({ title, testId, series, xLabel, yLabel }: { title: string; testId: string; series: OverlaySeries[]; xLabel: string; yLabel: string }) {
  const host = useRef<HTMLDivElement>(null);
  useEffect(() => {
    const element = host.current;
    if (!element) return;
    const options: Options = {
      width: Math.max(240, element.clientWidth),
      height: 180,
      legend: { show: false },
      cursor: { drag: { x: false, y: false } },
      scales: { x: { time: false } },
      axes: [
        { ...AXIS, label: xLabel, labelSize: 18, size: 36, ...niceAxis('number', true, true) },
        { ...AXIS, label: yLabel, labelSize: 18, size: 56, ...niceAxis('number', false) },
      ],
      series: [{ label: xLabel }, ...series.map((s) => ({ label: s.label, stroke: s.color, width: 2, spanGaps: true }))],
    };
    const chart = new uPlot(options, alignSeries(series), element);
    const resize = new ResizeObserver(() => chart.setSize({ width: Math.max(240, element.clientWidth), height: 180 }));
    resize.observe(element);
    return () => {
      resize.disconnect();
      chart.destroy();
    };
  }, [series, xLabel, yLabel]);
  return (
    <figure className="chart" data-testid={testId} data-series={series.length} data-points={series.map((s) => s.x.length).join(',')} aria-label={title}>
      <figcaption className="chart__title">
        <span>{title}</span>
      </figcaption>
      <div ref={host} className="chart__plot" />
      <ul className="overlay-legend overlay-legend--wrap" data-testid="overlay-legend">
        {series.map((s) => (
          <li key={s.key} title={s.key === s.label ? s.label : `${s.label} (${s.key})`}>
            <span className="run-swatch" style={{ background: s.color }} aria-hidden="true" />
            <span className="overlay-legend__label">{s.label}</span>
          </li>
        ))}
      </ul>
    </figure>
  );
}
