import { replicaShares, type MembershipLine } from '../store/metrics';

/**
 * The virtual-node map: one bar per data-parallel replica, as long as its share of the V virtual nodes
 * (the fixed slices of the global batch), with the agents that run it.
 */
export function VirtualNodeMap({ membership }: { membership: MembershipLine }) {
  const replicas = replicaShares(membership);
  const total = replicas.reduce((n, r) => n + r.virtualNodes, 0);
  return (
    <div className="vnode-map" data-testid="vnode-map" aria-label={`Virtual nodes: ${total} over ${replicas.length} replicas`}>
      {replicas.map((r) => (
        <div key={r.replica} className="vnode-map__row" data-testid="vnode-row">
          <span className="vnode-map__label">r{r.replica}</span>
          <span className="vnode-map__track">
            <span className="vnode-map__bar" style={{ width: `${total ? (100 * r.virtualNodes) / total : 0}%` }} />
          </span>
          <span className="vnode-map__count" title={r.hosts.join(', ')}>
            {r.virtualNodes} / {total}
          </span>
        </div>
      ))}
    </div>
  );
}
