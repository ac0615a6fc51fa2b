import { useEffect, useState } from 'react';
import type { StoredClusterTest } from '../../../engine/protocol/clusters';
import { testedAgo } from './testedAgo';

/** Now, again every minute: an age on show stays right while the view is open. */
export function useMinuteClock(): number {
  const [now, setNow] = useState(Date.now);
  useEffect(() => {
    const timer = setInterval(() => setNow(Date.now()), 60_000);
    return () => clearInterval(timer);
  }, []);
  return now;
}

/**
 * The cluster's last connection test as stored with it: when, how many of the hosts it tested were
 * ready, the link survey, and the hosts it does not cover because they were added or changed since.
 */
export function StoredTestSummary({ test }: { test: StoredClusterTest }) {
  const now = useMinuteClock();
  const ready = test.hosts.filter((h) => h.ok).length;
  const links = test.links?.state === 'done' ? `, links of ${test.links.pairs} pair${test.links.pairs === 1 ? '' : 's'} measured` : test.links ? `, link survey ${test.links.state}` : '';
  return (
    <span className={ready === test.hosts.length && test.untested.length === 0 ? 'ok-text' : 'error-text'} data-testid="last-test" title={`Last test finished ${new Date(test.at).toLocaleString()}`}>
      Last test ({testedAgo(test.at, now)}): {ready} of {test.hosts.length} host{test.hosts.length === 1 ? '' : 's'} ready{links}
      {test.untested.length > 0 && `; not tested since added or changed: ${test.untested.join(', ')}`}
    </span>
  );
}

/** A host's verdict in the stored test, when no test of this session shows it. */
export function StoredHostVerdict({ test, host }: { test?: StoredClusterTest; host: string }) {
  const verdict = test?.hosts.find((h) => h.host === host);
  if (!verdict) return <span className="muted">{test ? 'Not tested since it was added or changed' : 'Not tested yet'}</span>;
  return (
    <span className={verdict.ok ? 'ok-text' : 'error-text'} data-testid="stored-verdict" data-ok={String(verdict.ok)}>
      {verdict.ok ? '✓ ready at the last test' : `✗ ${verdict.why ?? 'failed'}`}
    </span>
  );
}
