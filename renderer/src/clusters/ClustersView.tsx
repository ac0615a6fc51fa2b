import { useEffect, useState } from 'react';
import { formatBytes } from '../format';
import type { HostFacts, HostTestView, HostView, StoredClusterTest } from '../../../engine/protocol/clusters';
import { openOverlay } from '../shell/shellStore';
import { ClusterActions, HostActions, HostEditForm } from './ClusterEditing';
import { AddHostsForm, ImportHostsForm } from './ClusterForms';
import './clusters.css';
import { LinkMatrix } from './LinkMatrix';
import { ClusterSettingsForm } from './ClusterSettingsForm';
import { StoredHostVerdict, StoredTestSummary } from './StoredTest';
import { SurveyProgress } from './SurveyProgress';
import { refreshClusters, resumePolling, selectCluster, testCluster, useClusters } from './clustersStore';
import { TrustDialog } from './TrustDialog';

const MARK: Record<string, string> = { running: '…', ok: '✓', warn: '!', fail: '✗', skipped: '–' };
const gib = (bytes?: number) => (bytes === undefined ? '?' : formatBytes(bytes));

function factsLine(f: HostFacts): string {
  return [`${f.os ?? '?'} ${f.arch ?? ''}`.trim(), `${f.cpus ?? '?'} CPUs`, `${gib(f.memoryBytes)} RAM`, `${gib(f.diskFreeBytes)} free`, f.node ? `Node ${f.node}` : 'no Node', f.gpus.length ? `${f.gpus.length}× ${f.gpus[0]}` : 'no GPU'].join(' · ');
}

function HostRow({ cluster, host, result, stored, busy }: { cluster: string; host: HostView; result?: HostTestView; stored?: StoredClusterTest; busy: boolean }) {
  const facts = result ? result.facts : stored?.hosts.find((h) => h.host === host.alias)?.facts;
  const [editing, setEditing] = useState(false);
  return (
    <tr data-testid="cluster-host" data-host={host.alias}>
      <td>
        <strong>{host.alias}</strong>
        <div className="muted">
          {host.user}@{host.address}:{host.port}
          {host.jump.length > 0 && ` via ${host.jump.join(' → ')}`}
        </div>
        <div className="muted">{host.identityFiles.length ? `key ${host.identityFiles.join(', ')}` : 'ssh-agent / default keys'}</div>
        {editing ? <HostEditForm cluster={cluster} host={host} onDone={() => setEditing(false)} /> : <HostActions cluster={cluster} host={host} disabled={busy} onEdit={() => setEditing(true)} />}
      </td>
      <td data-testid="preflight" data-ok={result?.ok === undefined ? '' : String(result.ok)}>
        {!result && <StoredHostVerdict test={stored} host={host.alias} />}
        {result && (
          <ul className="preflight">
            {result.steps.map((s) => (
              <li key={s.step} className={`preflight__step preflight__step--${s.status}`} data-step={s.step} data-status={s.status}>
                <span className="preflight__mark">{MARK[s.status]}</span> <span className="preflight__name">{s.step}</span> <span className="preflight__detail">{s.detail.split('\n')[0]}</span>
              </li>
            ))}
          </ul>
        )}
        {facts && (
          <div className="muted" data-testid="host-facts">
            {factsLine(facts)}
          </div>
        )}
      </td>
    </tr>
  );
}

/** Clusters: SSH clusters and their hosts, adding and importing hosts, and a connection test with preflight per host. */
export function ClustersView() {
  const listing = useClusters((s) => s.listing);
  const selected = useClusters((s) => s.selected);
  const error = useClusters((s) => s.error);
  const message = useClusters((s) => s.message);
  const test = useClusters((s) => s.test);
  useEffect(() => {
    void refreshClusters();
    // A test goes on (and is followed) when the view closes; opening it again follows it from here.
    resumePolling();
  }, []);
  const cluster = listing?.clusters.find((c) => c.name === selected);
  const running = test?.state === 'running';
  const current = test && test.cluster === selected ? test : undefined;
  const results = current ? new Map(current.hosts.map((h) => [h.host, h])) : new Map<string, HostTestView>();
  // The matrix this test just measured, else the one stored by an earlier test.
  const links = current?.survey?.profile ?? cluster?.links;
  return (
    <div className="overlay" role="dialog" aria-modal="true" aria-label="Clusters" data-testid="clusters-view">
      <div className="overlay__panel">
        <header className="overlay__header">
          <h2>Clusters</h2>
          <span className="muted">SSH machines to train on. Shoal stores key paths only ({listing?.file ?? 'clusters.json'}), never keys; host keys are checked against ~/.ssh/known_hosts.</span>
          <button type="button" className="button button--quiet" onClick={() => openOverlay(undefined)} aria-label="Close clusters" data-testid="close-overlay">
            ✕
          </button>
        </header>
        {error && (
          <p className="error-text overlay__message" role="alert" data-testid="clusters-error">
            {error}
          </p>
        )}
        {message && (
          <p className="overlay__message" data-testid="clusters-message">
            {message}
          </p>
        )}
        <div className="clusters">
          <div className="clusters__list">
            <h4 className="panel__title">Clusters</h4>
            {listing && listing.clusters.length === 0 && (
              <p className="muted" data-testid="clusters-empty">
                No SSH clusters yet. Add hosts by address below, or import them from your ~/.ssh/config. &ldquo;This machine&rdquo; needs no setup.
              </p>
            )}
            <ul className="cluster-list">
              {listing?.clusters.map((c) => (
                <li key={c.name}>
                  <button type="button" className={`cluster-list__item${c.name === selected ? ' is-selected' : ''}`} onClick={() => selectCluster(c.name)} data-testid="cluster-item">
                    <strong>{c.name}</strong> <span className="muted">{c.hosts.length} host{c.hosts.length === 1 ? '' : 's'}</span>
                  </button>
                </li>
              ))}
            </ul>
            <AddHostsForm defaultCluster={selected} />
            <ImportHostsForm defaultCluster={selected} />
          </div>
          <div className="clusters__detail">
            {!cluster ? (
              <div className="empty-state">
                <strong>Add your machines</strong>
                <span>Give each host as user@address[:port] with the path of its key, or import Host entries from ~/.ssh/config. Then press Test connection: Shoal checks every host (reachable, host key, login, OS, CPUs, memory, disk, Node ≥ 20, GPUs, a free port, clock), then measures bandwidth and latency between every pair of hosts with its agents.</span>
              </div>
            ) : (
              <section data-testid="cluster-detail">
                <div className="cluster-detail__head">
                  <h3 className="run-detail__title">{cluster.name}</h3>
                  <button type="button" className="button button--primary" disabled={running} onClick={() => void testCluster(cluster.name)} data-testid="test-cluster">
                    {running ? 'Testing…' : cluster.lastTest ? 'Test again' : 'Test connection'}
                  </button>
                  <ClusterActions name={cluster.name} disabled={running} />
                  {current?.ready !== undefined && (
                    <span className={current.ready === current.hosts.length ? 'ok-text' : 'error-text'} data-testid="test-summary">
                      {current.ready} of {current.hosts.length} host{current.hosts.length === 1 ? '' : 's'} ready
                    </span>
                  )}
                  {!current && cluster.lastTest && <StoredTestSummary test={cluster.lastTest} />}
                </div>
                <table className="runs-table">
                  <thead>
                    <tr>
                      <th>Host</th>
                      <th>Preflight</th>
                    </tr>
                  </thead>
                  <tbody>
                    {cluster.hosts.map((h) => (
                      <HostRow key={h.alias} cluster={cluster.name} host={h} result={results.get(h.alias)} stored={cluster.lastTest} busy={running} />
                    ))}
                  </tbody>
                </table>
                {current?.survey && <SurveyProgress survey={current.survey} />}
                {links && <LinkMatrix profile={links} />}
                <ClusterSettingsForm key={cluster.name} cluster={cluster.name} settings={cluster.settings} disabled={running} />
              </section>
            )}
          </div>
        </div>
      </div>
      {test && test.trust.length > 0 && <TrustDialog prompt={test.trust[0]} />}
    </div>
  );
}
