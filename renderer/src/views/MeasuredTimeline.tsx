import { useState } from 'react';
import type { TimelineEvent } from '../../../engine/protocol/timeline';
import { formatMs } from '../format';
import { timelineRows } from '../monitor/timelineRows';
import { useJobPrediction } from '../monitor/useJobPrediction';
import type { TimelineJobEvent } from '../../../engine/protocol/events';
import { describeEvent, Gantt, KindLegend, useWidth, type GanttRow } from './Gantt';

/**
 * The merged live timeline of all ranks: a sampled step (every 10th of a synchronous job, windows of an
 * asynchronous one) with one row per rank on the coordinator's clock, and under it the cost model's
 * timeline of the plan on the same axis. Follows the newest sample unless an older step is picked.
 */
export function MeasuredTimeline({ samples }: { samples: TimelineJobEvent[] }) {
  const [picked, setPicked] = useState<number | null>(null);
  const [hover, setHover] = useState<TimelineEvent>();
  const { ref, width } = useWidth();
  const prediction = useJobPrediction();
  const sample = (picked !== null ? samples.find((s) => s.step === picked) : undefined) ?? samples.at(-1);
  const rows = timelineRows(sample, prediction?.timeline);
  const gantt: GanttRow[] = [
    ...rows.measured.map((r) => ({ key: `r${r.rank}`, label: `rank ${r.rank} · s${r.stage}r${r.replica}`, events: r.events, data: { rank: r.rank, stage: r.stage } })),
    ...rows.predicted.map((p) => ({ key: `p${p.stage}`, label: `plan · s${p.stage}`, events: p.events, predicted: true, data: { stage: p.stage } })),
  ];
  const summary = sample
    ? `step ${sample.step}: ${formatMs(rows.measuredMs)} measured${prediction ? ` · ${formatMs(prediction.stepMs)} predicted${prediction.calibrated ? ' (calibrated by this run)' : ' (datasheet speeds)'}` : ''}`
    : '';
  return (
    <section className="panel timeline" data-testid="measured-timeline" data-step={sample?.step ?? ''} aria-label="Measured timeline">
      <div className="timeline__head">
        <h2 className="panel__title">Timeline · all ranks</h2>
        <label className="timeline__picker">
          Step{' '}
          <select data-testid="timeline-step" value={picked ?? ''} onChange={(e) => setPicked(e.target.value === '' ? null : Number(e.target.value))} disabled={samples.length === 0}>
            <option value="">latest{samples.length ? ` (${samples.at(-1)!.step})` : ''}</option>
            {samples.map((s) => (
              <option key={s.step} value={s.step}>
                {s.step}
              </option>
            ))}
          </select>
        </label>
        <span className="timeline__readout" data-testid="measured-timeline-readout">
          {hover ? describeEvent(hover) : summary}
        </span>
        <KindLegend />
      </div>
      <div ref={ref} className="timeline__body timeline__body--tall">
        {sample ? (
          <Gantt rows={gantt} spanMs={rows.spanMs} width={width} label={`Timeline of step ${sample.step} over ${rows.measured.length} ranks, with the plan's prediction`} hovered={hover} onHover={setHover} />
        ) : (
          <div className="timeline__empty muted">The agents’ timeline of a sampled step appears here (every 10th step).</div>
        )}
      </div>
    </section>
  );
}
