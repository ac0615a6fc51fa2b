import { LineChart, jobMarkers } from '../charts/LineChart';
import { useStudio } from '../store/studioStore';
import { stageColor } from '../graph/stageColors';
import { AlertStrip } from './AlertStrip';
import { ExportButtons } from './ExportButtons';
import { MeasuredTimeline } from './MeasuredTimeline';
import { PipelineStats } from './PipelineStats';
import { RankTable } from './RankTable';
import { planShape } from './AutoPlanPanel';
import type { JobView } from '../store/studioStore';

/** Accuracy: from a round number a little below the lowest value up to 100%, so late gains stay visible. */
const percentRange = (min: number): [number, number] => [Math.max(0, Math.min(90, Math.floor((min - 2) / 5) * 5)), 100];

/** Which run the Monitor shows: its job id, model, plan and start, so charts are never mistaken for another run's. */
function RunIdentity({ job }: { job: JobView }) {
  const started = job.startedAt ? new Date(job.startedAt) : undefined;
  return (
    <div className="monitor__run" data-testid="monitor-run" data-job={job.id ?? ''}>
      <strong>{job.id ?? 'starting…'}</strong>
      <span>{job.model}</span>
      <span title={job.plan ? planShape(job.plan) : undefined}>{job.planLabel}</span>
      {started && (
        <span className="muted">
          started <time dateTime={started.toISOString()}>{started.toLocaleString()}</time>
        </span>
      )}
      <span className={`monitor__state monitor__state--${job.metrics.state}`}>{job.metrics.state}</span>
    </div>
  );
}

/**
 * The current job live: alerts, loss per step, validation accuracy per evaluation, throughput, per-agent
 * utilization and memory, the merged timeline of all ranks against the plan's, and exports.
 */
export function Monitor() {
  const job = useStudio((s) => s.job);
  const metrics = job?.metrics;
  const steps = metrics?.steps ?? [];
  // Before the first job the charts would be empty: a single line keeps the room for the graph.
  if (!job || !metrics) {
    return (
      <section className="monitor panel monitor--empty" aria-label="Monitor">
        <h2 className="panel__title">Monitor</h2>
        <span className="muted">Press Train to run the plan on this machine: loss, accuracy and throughput appear here live.</span>
      </section>
    );
  }
  return (
    <section className="monitor panel" aria-label="Monitor">
      <div className="monitor__header">
        <h2 className="panel__title">Monitor</h2>
        <RunIdentity job={job} />
        <ExportButtons job={job} />
      </div>
      <div className="monitor__agents">
        {metrics?.agents.map((a) => (
          <span key={a.rank} className="agent-chip" style={{ borderColor: stageColor(a.stage) }} title={`${a.host}, stage ${a.stage}, replica ${a.replica}${a.device ? `; ${a.device.name}; ${a.device.reason}` : ''}`}>
            rank {a.rank} · s{a.stage}r{a.replica} · {a.backend}
            {a.device?.gpu && ` · GPU ${a.device.gpu.index}${a.device.kind === 'gpu' ? ` ${a.device.gpu.name}` : ' unused'}`}
          </span>
        ))}
      </div>
      <AlertStrip alerts={metrics.alerts} />
      <div className="monitor__charts">
        <LineChart title="Training loss" testId="loss-chart" x={steps} y={metrics?.loss ?? []} xLabel="step" yLabel="loss" color="#4cc9f0" markers={jobMarkers(metrics)} />
        <LineChart
          title="Validation accuracy"
          testId="accuracy-chart"
          x={metrics?.evalSteps ?? []}
          y={metrics?.accuracy ?? []}
          xLabel="step"
          yLabel="accuracy"
          color="#80ed99"
          yRange={percentRange}
          points
          quantity="percent"
        />
        <LineChart title="Throughput" testId="throughput-chart" x={steps} y={metrics?.samplesPerSec ?? []} xLabel="step" yLabel="samples/s" color="#f4a261" quantity="perSecond" markers={jobMarkers(metrics)} />
      </div>
      <RankTable sample={metrics.timelines.at(-1)} agents={metrics.agents} membership={metrics.membership} pipeline={metrics.pipeline} commWaitMs={metrics.commWaitMs.at(-1)} />
      <PipelineStats stages={metrics.pipeline} />
      <MeasuredTimeline samples={metrics.timelines} />
    </section>
  );
}
