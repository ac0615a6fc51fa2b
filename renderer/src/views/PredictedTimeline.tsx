import { useMemo, useState } from 'react';
import type { TimelineEvent } from '../../../engine/protocol/timeline';
import { formatMs, formatPercent } from '../format';
import { usePlan } from '../store/planState';
import { describeEvent, Gantt, KindLegend, useWidth, type GanttRow } from './Gantt';

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
  const rows: GanttRow[] = Array.from({ length: stages }, (_, s) => ({
    key: `s${s}`,
    label: `Stage ${s}`,
    events: (events ?? []).filter((e) => e.stage === s),
    testId: 'timeline-row',
    data: { stage: s },
  }));
  return (
    <section className="panel timeline" data-testid="predicted-timeline" aria-label="Predicted timeline">
      <div className="timeline__head">
        <h2 className="panel__title">Predicted timeline · one step</h2>
        <span className="timeline__readout" data-testid="timeline-readout">
          {hover ? describeEvent(hover) : cost ? `${formatMs(cost.stepMs)} per step · bubble ${formatPercent(cost.bubbleFraction, 0)} (gaps) · ${plan?.schedule}` : ''}
        </span>
        <KindLegend />
      </div>
      <div ref={ref} className="timeline__body">
        {!events?.length ? (
          <div className="timeline__empty muted">{plan ? 'No prediction: fix the plan’s errors to see its timeline.' : 'Open a model to see its predicted timeline.'}</div>
        ) : (
          <Gantt rows={rows} spanMs={span} width={width} label={`Predicted timeline of one step over ${stages} stages`} hovered={hover} barTestId="timeline-bar" onHover={setHover} />
        )}
      </div>
    </section>
  );
}
