import { useEffect, useRef, useState } from 'react';
import type { TimelineEvent, TimelineKind } from '../../../engine/protocol/timeline';
import { formatMs } from '../format';
import { niceTicks, tickLabels } from '../charts/axis';

/** Colours by kind of work: compute in blue and orange, communication in purple and red, the update in green. */
export const KIND_COLORS: Record<TimelineKind, string> = {
  forward: '#5aa9e6',
  backward: '#f4a261',
  send: '#b388eb',
  recv: '#8e7dbe',
  allreduce: '#ef476f',
  optimizer: '#80ed99',
};

/** One row of a Gantt chart: a device's events, in ms from the start of the step. */
export interface GanttRow {
  key: string;
  label: string;
  events: TimelineEvent[];
  /** Predicted rows are drawn translucent, under a dashed lane. */
  predicted?: boolean;
  /** data-* attributes for tests, e.g. { rank: 3 }. */
  data?: Record<string, string | number>;
  /** Default: gantt-row, or gantt-predicted-row for predicted rows. */
  testId?: string;
}

/** The colour key of the kinds of work, for a timeline's header. */
export function KindLegend() {
  return (
    <span className="timeline__legend">
      {Object.entries(KIND_COLORS).map(([kind, color]) => (
        <span key={kind} className="timeline__key">
          <i style={{ backgroundColor: color }} />
          {kind}
        </span>
      ))}
    </span>
  );
}

const COMM = new Set<TimelineKind>(['send', 'recv', 'allreduce']);
const GUTTER = 84;
const ROW = 24;
const AXIS = 18;

export function useWidth() {
  const ref = useRef<HTMLDivElement>(null);
  const [width, setWidth] = useState(640);
  useEffect(() => {
    const el = ref.current;
    if (!el) return;
    const observer = new ResizeObserver(() => setWidth(Math.max(200, el.clientWidth)));
    observer.observe(el);
    return () => observer.disconnect();
  }, []);
  return { ref, width };
}

export const describeEvent = (e: TimelineEvent) =>
  `${e.rank !== undefined ? `Rank ${e.rank} · ` : ''}stage ${e.stage} · ${e.kind}${e.fused ? ' (with its backward)' : ''}${e.micro !== undefined ? ` · micro-batch ${e.micro}` : ''} · ${formatMs(e.startMs)} → ${formatMs(e.endMs)} (${formatMs(e.endMs - e.startMs)})`;

/**
 * Rows of timeline bars on one time axis (0 … spanMs), the predicted timeline's drawing: compute on the
 * upper lane of a row, communication on the lower one, idle time as gaps. Hover a bar for its details.
 */
export function Gantt({
  rows,
  spanMs,
  width,
  label,
  hovered,
  barTestId,
  onHover,
}: {
  rows: GanttRow[];
  spanMs: number;
  width: number;
  label: string;
  /** The bar under the pointer, outlined. */
  hovered?: TimelineEvent;
  barTestId?: string;
  onHover(e: TimelineEvent | undefined): void;
}) {
  const span = Math.max(1e-9, spanMs);
  const x = (ms: number) => GUTTER + (Math.max(0, ms) / span) * (width - GUTTER - 8);
  const ticks = niceTicks('ms', 0, span, 4);
  const tickText = tickLabels('ms', ticks);
  const height = rows.length * ROW + AXIS;
  return (
    <svg width={width} height={height} role="img" aria-label={label} onMouseLeave={() => onHover(undefined)}>
      {rows.map((row, r) => (
        <g key={row.key} data-testid={row.testId ?? (row.predicted ? 'gantt-predicted-row' : 'gantt-row')} {...Object.fromEntries(Object.entries(row.data ?? {}).map(([k, v]) => [`data-${k}`, v]))}>
          <rect className={row.predicted ? 'timeline__lane timeline__lane--predicted' : 'timeline__lane'} x={GUTTER} y={r * ROW + 2} width={width - GUTTER - 8} height={ROW - 4} />
          <text className="timeline__label" x={8} y={r * ROW + ROW / 2 + 4}>
            {row.label}
          </text>
          {row.events.map((e, i) => {
            const comm = COMM.has(e.kind);
            return (
              <rect
                key={i}
                data-testid={barTestId}
                data-stage={e.stage}
                data-kind={e.kind}
                x={x(e.startMs)}
                y={r * ROW + (comm ? ROW - 9 : 3)}
                width={Math.max(1, x(e.endMs) - x(e.startMs))}
                height={comm ? 6 : ROW - 13}
                rx={1.5}
                fill={KIND_COLORS[e.kind]}
                fillOpacity={row.predicted ? 0.5 : 1}
                className={hovered === e ? 'timeline__bar timeline__bar--hover' : 'timeline__bar'}
                onMouseEnter={() => onHover(e)}
              >
                <title>{describeEvent(e)}</title>
              </rect>
            );
          })}
        </g>
      ))}
      {ticks.map((t, i) => (
        <text key={i} className="timeline__tick" x={x(t)} y={height - 4} textAnchor={i === 0 ? 'start' : i === ticks.length - 1 ? 'end' : 'middle'}>
          {tickText[i]}
        </text>
      ))}
    </svg>
  );
}
