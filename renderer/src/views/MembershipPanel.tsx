import { stageColor } from '../graph/stageColors';
import { useStudio } from '../store/studioStore';
import { ResizeControls } from './ResizeControls';
import { VirtualNodeMap } from './VirtualNodeMap';

/**
 * The running job's membership: its generation (a new one after every resize or lost agent), who holds
 * each rank (host, pid, stage, replica), the virtual-node map, and controls to add or release agents.
 */
export function MembershipPanel() {
  const job = useStudio((s) => s.job);
  if (!job) return null;
  const membership = job.metrics.membership;
  return (
    <section className="panel membership" aria-label="Membership" data-testid="membership">
      <h2 className="panel__title">Membership</h2>
      {membership ? (
        <>
          <div className="membership__generation" data-testid="membership-generation" data-generation={membership.generation}>
            Generation {membership.generation} · from step {membership.step} · <span className="muted">{membership.reason}</span>
          </div>
          <div className="membership__counts" data-testid="membership-counts">
            <span data-testid="membership-training">{membership.agents.length} training</span> · <span data-testid="membership-waiting">{membership.waiting?.length ?? 0} waiting</span> ·{' '}
            <span data-testid="membership-lost">{membership.lost ?? 0} lost</span>
          </div>
          {membership.waiting?.length ? (
            <ul className="membership__waiting muted" data-testid="membership-waiting-agents">
              {membership.waiting.map((w) => (
                <li key={`${w.host}-${w.pid}`}>
                  {w.host} (pid {w.pid}) waits: {w.reason}
                </li>
              ))}
            </ul>
          ) : null}
          <table className="membership__agents" data-testid="membership-agents">
            <thead>
              <tr>
                <th>Rank</th>
                <th>Host</th>
                <th>Pid</th>
                <th>Stage</th>
                <th>Replica</th>
                <th title="virtual nodes: this rank's share of the fixed global batch">VN</th>
              </tr>
            </thead>
            <tbody>
              {membership.agents.map((a) => (
                <tr key={a.rank} data-testid="membership-agent">
                  <td>{a.rank}</td>
                  <td>{a.host}</td>
                  <td>{a.pid}</td>
                  <td>
                    <span className="plan__stage" style={{ borderColor: stageColor(a.stage) }}>
                      {a.stage}
                    </span>
                  </td>
                  <td>{a.replica}</td>
                  <td>{a.virtualNodes}</td>
                </tr>
              ))}
            </tbody>
          </table>
          <VirtualNodeMap membership={membership} />
        </>
      ) : (
        <div className="muted">The agents appear here once the job has started.</div>
      )}
      <ResizeControls job={job} />
    </section>
  );
}
