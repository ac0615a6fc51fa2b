import { useEffect, useMemo, useRef, useState } from 'react';
import type { TimelineEvent, TimelineKind } from '../../../engine/protocol/timeline';
import { formatMs } from '../format';
import { usePlan } from '../store/planState';

/** Colours by kind of work: compute in blue and orange, communication in purple and red, the update in green. */
export const KIND_COLORS: Record<TimelineKind, string> = {
  forward: '#5aa9e6',
  backward: '#f4a261',
  send: '#b388eb',
  recv: '#8e7dbe',
  allreduce: '#ef476f',
  optimizer: '#80ed99',
};
const COMM = new Set<TimelineKind>(['send', 'recv', 'allreduce']);
const GUTTER = 64;
const ROW = 26;
const AXIS = 18;

function useWidth() {
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

const describe = (e: TimelineEvent) => `Stage ${e.stage} · ${e.kind}${e.micro !== undefined ? ` · micro-batch ${e.micro}` : ''} · ${formatMs(e.startMs)} → ${formatMs(e.endMs)} (${formatMs(e.endMs - e.startMs)})`;

/**
 * The cost model's timeline of one step, Gantt-style: a row per pipeline stage, compute on the upper
 * lane (forward, backward, optimizer), communication on the lower lane (send, receive, all-reduce).
 * Idle time shows as gaps: the pipeline bubble. Hover a bar for its micro-batch and times.
 */
export function PredictedTimeline() {
  const { cost, plan } = usePlan();
  const { ref, width } = useWidth();
  const [hover, setHover] = useState<TimelineEvent>();
  const events = cost?.timeline;
  const stages = plan?.stages.length ?? 0;
  const span = useMemo(() => Math.max(1e-9, ...(events ?? []).map((e) => e.endMs)), [events]);
  const x = (ms: number) => GUTTER + (ms / span) * (width - GUTTER - 8);
  const ticks = [0, 0.25, 0.5, 0.75, 1].map((f) => f * span);
  const height = stages * ROW + AXIS;
  return (
    <section className="panel timeline" data-testid="predicted-timeline" aria-label="Predicted timeline">
      <div className="timeline__head">
        <h2 className="panel__title">Predicted timeline · one step</h2>
        <span className="timeline__readout" data-testid="timeline-readout">
          {hover ? describe(hover) : cost ? `${formatMs(cost.stepMs)} per step · bubble ${(cost.bubbleFraction * 100).toFixed(0)}% (gaps) · ${plan?.schedule}` : ''}
        </span>
        <span className="timeline__legend">
          {Object.entries(KIND_COLORS).map(([kind, color]) => (
            <span key={kind} className="timeline__key">
              <i style={{ backgroundColor: color }} />
              {kind}
            </span>
          ))}
        </span>
      </div>
      <div ref={ref} className="timeline__body">
        {!events?.length ? (
          <div className="timeline__empty muted">{plan ? 'No prediction: fix the plan’s errors to see its timeline.' : 'Open a model to see its predicted timeline.'}</div>
        ) : (
          <svg width={width} height={height} role="img" aria-label={`Predicted timeline of one step over ${stages} stages`} onMouseLeave={() => setHover(undefined)}>
            {Array.from({ length: stages }, (_, s) => (
              <g key={s} data-testid="timeline-row" data-stage={s}>
                <rect className="timeline__lane" x={GUTTER} y={s * ROW + 2} width={width - GUTTER - 8} height={ROW - 4} />
                <text className="timeline__label" x={8} y={s * ROW + ROW / 2 + 4}>
                  Stage {s}
                </text>
              </g>
            ))}
            {events.map((e, i) => {
              const comm = COMM.has(e.kind);
              const y = e.stage * ROW + (comm ? ROW - 9 : 3);
              const w = Math.max(1, x(e.endMs) - x(e.startMs));
              return (
                <rect
                  key={i}
                  data-testid="timeline-bar"
                  data-stage={e.stage}
                  data-kind={e.kind}
                  x={x(e.startMs)}
                  y={y}
                  width={w}
                  height={comm ? 6 : ROW - 13}
                  rx={1.5}
                  fill={KIND_COLORS[e.kind]}
                  className={hover === e ? 'timeline__bar timeline__bar--hover' : 'timeline__bar'}
                  onMouseEnter={() => setHover(e)}
                >
                  <title>{describe(e)}</title>
                </rect>
              );
            })}
            {ticks.map((t, i) => (
              <text key={i} className="timeline__tick" x={x(t)} y={height - 4} textAnchor={i === 0 ? 'start' : i === ticks.length - 1 ? 'end' : 'middle'}>
                {formatMs(t)}
              </text>
            ))}
          </svg>
        )}
      </div>
    </section>
  );
}
