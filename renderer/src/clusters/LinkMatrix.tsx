import { formatBandwidth, formatLatency, linkMatrix } from '../../../engine/cluster/linkMatrix';
import type { ClusterLinkProfile } from '../../../engine/cluster/linkProfile';

/**
 * The bandwidth and latency the link survey measured between every pair of hosts, host × host, with
 * when it was measured and which hosts were left out. The cost model prices this cluster's transfers
 * with these numbers (engine/cluster/measuredLinks.ts).
 */
export function LinkMatrix({ profile }: { profile: ClusterLinkProfile }) {
  const { hosts, cells } = linkMatrix(profile);
  return (
    <section data-testid="link-matrix" data-measured-at={profile.measuredAt}>
      <h4 className="panel__title">Links between hosts</h4>
      <div className="muted">
        Measured {new Date(profile.measuredAt).toLocaleString()} by agents on the hosts: bandwidth of 4 MiB messages, one-way latency of 8-byte ones. The cost model takes them as the links between these hosts.
      </div>
      <table className="runs-table">
        <thead>
          <tr>
            <th />
            {hosts.map((h) => (
              <th key={h}>{h}</th>
            ))}
          </tr>
        </thead>
        <tbody>
          {hosts.map((row, i) => (
            <tr key={row}>
              <th>{row}</th>
              {cells[i].map((c, j) => (
                <td key={hosts[j]} data-testid="link-cell" data-from={row} data-to={hosts[j]}>
                  {i === j ? '—' : c ? (
                    <>
                      <strong>{formatBandwidth(c.beta)}</strong>
                      <div className="muted">{formatLatency(c.alpha)}</div>
                    </>
                  ) : (
                    <span className="muted">not measured</span>
                  )}
                </td>
              ))}
            </tr>
          ))}
        </tbody>
      </table>
      {profile.leftOut.map((l) => (
        <div key={l.host} className="muted" data-testid="link-left-out">
          Left out: {l.host} ({l.reason.split('\n')[0]})
        </div>
      ))}
    </section>
  );
}
