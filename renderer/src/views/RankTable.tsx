import type { TimelineJobEvent } from '../../../engine/protocol/events';
import { stageColor } from '../graph/stageColors';
import { formatBytes, formatMs, formatPercent } from '../format';
import { rankStats } from '../monitor/rankStats';
import type { AgentLine, MembershipLine, PipelineStageLine } from '../store/metrics';

/** Bring the membership panel (who holds which rank, resize controls) into view. */
function showMembership(): void {
  const panel = document.querySelector<HTMLElement>('[data-testid="membership"]');
  panel?.scrollIntoView({ block: 'nearest' });
  panel?.focus();
}

/**
 * Per agent, from the newest sampled step: host, stage and replica; how busy it computed; how long it
 * communicated; its peak of stashed activations; and its stage's utilization as the pipeline reports it.
 */
export function RankTable(props: { sample: TimelineJobEvent | undefined; agents: AgentLine[]; membership?: MembershipLine; pipeline: PipelineStageLine[]; commWaitMs: number | undefined }) {
  const { sample, agents, membership, pipeline, commWaitMs } = props;
  if (!sample) return null;
  // Ranks are renumbered by every new generation: hosts only for a sample of the current one.
  const current = !membership || sample.step >= membership.step;
  const rows = rankStats(sample, new Map(current ? agents.map((a) => [a.rank, a.host]) : []));
  const utilization = new Map(pipeline.map((p) => [p.stage, p.utilization]));
  return (
    <div className="rank-table">
      <div className="rank-table__caption muted">
        Agents at step {sample.step}
        {commWaitMs !== undefined && Number.isFinite(commWaitMs) ? ` · longest gradient wait of the last step ${formatMs(commWaitMs)}` : ''} ·{' '}
        <button type="button" className="link-button" onClick={showMembership}>
          membership
        </button>
      </div>
      <table className="pipeline-stats" data-testid="rank-table">
        <thead>
          <tr>
            <th>Rank</th>
            <th>Host</th>
            <th>Stage</th>
            <th>Replica</th>
            <th title="share of the sampled step spent in forward, backward and the optimizer">Busy</th>
            <th title="time in sends, receives and all-reduce during the sampled step (may overlap compute)">Comm</th>
            <th title="peak bytes of activations stashed for the backward pass (micro-batches in flight)">Peak activations</th>
            <th title="the stage's compute share of the whole step, as its agents report it">Stage util.</th>
          </tr>
        </thead>
        <tbody>
          {rows.map((r) => (
            <tr key={r.rank} data-testid="rank-row" data-rank={r.rank}>
              <td>{r.rank}</td>
              <td>{r.host}</td>
              <td>
                <span className="plan__stage" style={{ borderColor: stageColor(r.stage) }}>
                  {r.stage}
                </span>
              </td>
              <td>{r.replica}</td>
              <td data-testid="rank-busy">
                <span className="rank-table__bar" style={{ width: `${Math.round(r.busy * 40)}px` }} />
                {formatPercent(r.busy, 0)}
              </td>
              <td>{formatMs(r.commMs)}</td>
              <td title={`${r.peakStashed} micro-batch(es) stashed at the peak`}>{formatBytes(r.peakStashedBytes)}</td>
              <td>{utilization.has(r.stage) ? formatPercent(utilization.get(r.stage) ?? 0, 0) : '—'}</td>
            </tr>
          ))}
        </tbody>
      </table>
    </div>
  );
}
