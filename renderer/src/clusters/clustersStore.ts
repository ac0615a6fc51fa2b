import { create } from 'zustand';
import type { AddHostsRequest, ClusterListing, ClusterTestStatus, EditHostRequest, HostTestView, ImportHostsRequest } from '../../../engine/protocol/clusters';
import { setStoredClusters } from '../store/clusters';
import { studioClient } from '../store/actions';
import { errorText } from '../store/errorText';

/**
 * The Cluster view's data: stored SSH clusters, the one selected, and its connection test — polled
 * while it runs, because it may stop to ask the user whether to trust an unknown host key.
 */
interface ClustersState {
  listing?: ClusterListing;
  selected?: string;
  error?: string;
  /** A line about the last add or import (hosts saved, warnings). */
  message?: string;
  test?: ClusterTestStatus;
  /**
   * The outcome of each cluster's last finished test in this studio session: hosts ready of all, and
   * what preflight found on each host (cores, GPUs) — Deploy is held back while it failed, and pricing
   * on the cluster uses the hosts' cores.
   */
  lastTests: Record<string, LastTest>;
}

export interface LastTest {
  ready: number;
  hosts: number;
  facts: Record<string, NonNullable<HostTestView['facts']>>;
  /** The hosts that failed, with their first failed step. */
  failed: Array<{ host: string; why: string }>;
}

export const useClusters = create<ClustersState>()(() => ({ lastTests: {} }));

// The Plan panel prices plans on stored clusters too: keep their specs in step with the listing and tests.
useClusters.subscribe((s, before) => {
  if (s.listing === before.listing && s.lastTests === before.lastTests) return;
  const facts = Object.fromEntries(Object.entries(s.lastTests).map(([name, t]) => [name, Object.fromEntries(Object.entries(t.facts).map(([host, f]) => [host, { cpus: f.cpus, gpus: f.gpus }]))]));
  setStoredClusters(s.listing?.clusters ?? [], facts);
});

/** What a finished test says, kept per cluster. */
function recordTest(test: ClusterTestStatus): void {
  if (test.state !== 'done') return;
  const facts = Object.fromEntries(test.hosts.filter((h) => h.facts).map((h) => [h.host, h.facts!]));
  const failed = test.hosts.filter((h) => h.ok === false).map((h) => {
    const step = h.steps.find((s) => s.status === 'fail');
    return { host: h.host, why: step ? `${step.step}: ${step.detail.split('\n')[0]}` : 'failed' };
  });
  const last: LastTest = { ready: test.ready ?? test.hosts.filter((h) => h.ok).length, hosts: test.hosts.length, facts, failed };
  useClusters.setState((s) => ({ lastTests: { ...s.lastTests, [test.cluster]: last } }));
}

/** Forget a cluster's last test (its hosts changed, it was renamed or removed). */
function forgetTest(name: string, renamedTo?: string): void {
  useClusters.setState((s) => {
    const { [name]: last, ...rest } = s.lastTests;
    return { lastTests: renamedTo && last ? { ...rest, [renamedTo]: last } : rest, test: s.test?.cluster === name ? undefined : s.test };
  });
}

const POLL_MS = 300;
let polling: ReturnType<typeof setTimeout> | undefined;

export async function refreshClusters(): Promise<void> {
  const client = studioClient();
  if (!client) return;
  try {
    const listing = await client.listClusters();
    const selected = useClusters.getState().selected;
    useClusters.setState({ listing, error: undefined, selected: selected && listing.clusters.some((c) => c.name === selected) ? selected : listing.clusters[0]?.name });
  } catch (error) {
    useClusters.setState({ error: errorText(error) });
  }
}

export function selectCluster(name: string): void {
  if (useClusters.getState().test?.state === 'running') return;
  useClusters.setState({ selected: name, test: undefined });
}

/** Add hosts; resolves to the studio's refusal (a missing key file, a bad host), shown at the form. */
export async function addHosts(request: AddHostsRequest): Promise<string | undefined> {
  const client = studioClient();
  if (!client) return 'The studio is not connected.';
  try {
    const listing = await client.addClusterHosts(request);
    forgetTest(request.cluster);
    useClusters.setState({ listing, selected: request.cluster, error: undefined, test: undefined, message: `Saved ${request.hosts.length} host${request.hosts.length === 1 ? '' : 's'} in ${request.cluster}. Test the connection next.` });
    return undefined;
  } catch (error) {
    useClusters.setState({ message: undefined });
    return errorText(error);
  }
}

/** Run a change of the stored clusters; resolves to its refusal, if any. */
async function change(what: (client: NonNullable<ReturnType<typeof studioClient>>) => Promise<ClusterListing>, message: string, after: (listing: ClusterListing) => void = () => {}): Promise<string | undefined> {
  const client = studioClient();
  if (!client) return 'The studio is not connected.';
  if (useClusters.getState().test?.state === 'running') return 'A connection test is running: wait for it to finish.';
  try {
    const listing = await what(client);
    useClusters.setState({ listing, error: undefined, message });
    after(listing);
    return undefined;
  } catch (error) {
    return errorText(error);
  }
}

export function renameCluster(cluster: string, to: string): Promise<string | undefined> {
  return change((c) => c.renameCluster({ cluster, to }), `Cluster ${cluster} is now ${to}.`, () => {
    forgetTest(cluster, to);
    useClusters.setState({ selected: to });
  });
}

export function removeCluster(cluster: string): Promise<string | undefined> {
  return change((c) => c.removeCluster(cluster), `Cluster ${cluster} removed.`, (listing) => {
    forgetTest(cluster);
    useClusters.setState({ selected: listing.clusters[0]?.name });
  });
}

export function editHost(request: EditHostRequest): Promise<string | undefined> {
  return change((c) => c.editClusterHost(request), `Host ${request.host} of ${request.cluster} changed. Test the connection again.`, () => forgetTest(request.cluster));
}

export function removeHost(cluster: string, host: string): Promise<string | undefined> {
  return change((c) => c.removeClusterHost({ cluster, host }), `Host ${host} removed from ${cluster}.`, (listing) => {
    forgetTest(cluster);
    if (!listing.clusters.some((c) => c.name === cluster)) useClusters.setState({ selected: listing.clusters[0]?.name, message: `Host ${host} was the last of ${cluster}: the cluster is removed.` });
  });
}

export async function importHosts(request: ImportHostsRequest): Promise<boolean> {
  const client = studioClient();
  if (!client) return false;
  try {
    const result = await client.importClusterHosts(request);
    forgetTest(request.cluster);
    const warnings = result.warnings.length ? ` Warnings: ${result.warnings.join(' ')}` : '';
    useClusters.setState({ listing: result, selected: request.cluster, error: undefined, test: undefined, message: `Imported ${result.imported.join(', ')} from ${result.from}.${warnings}` });
    return true;
  } catch (error) {
    useClusters.setState({ error: errorText(error), message: undefined });
    return false;
  }
}

async function poll(testId: string): Promise<void> {
  const client = studioClient();
  if (!client) return;
  try {
    const test = await client.clusterTestStatus(testId);
    if (useClusters.getState().test?.id !== testId && useClusters.getState().test) return;
    useClusters.setState({ test });
    recordTest(test);
    if (test.state === 'running') polling = setTimeout(() => void poll(testId), POLL_MS);
    // A survey stored a new link matrix: the listing carries it when the view opens next time.
    else if (test.survey?.state === 'done') await refreshClusters();
  } catch (error) {
    useClusters.setState({ error: errorText(error) });
  }
}

export async function testCluster(name: string): Promise<void> {
  const client = studioClient();
  if (!client) return;
  clearTimeout(polling);
  try {
    const { testId } = await client.startClusterTest(name);
    useClusters.setState({ test: { id: testId, cluster: name, state: 'running', hosts: [], trust: [] }, error: undefined, message: undefined });
    await poll(testId);
  } catch (error) {
    useClusters.setState({ error: errorText(error) });
  }
}

export async function answerTrust(promptId: string, trust: boolean): Promise<void> {
  const client = studioClient();
  const test = useClusters.getState().test;
  if (!client || !test) return;
  // The question leaves the dialog at once; the next poll shows what the answer led to.
  useClusters.setState({ test: { ...test, trust: test.trust.filter((t) => t.id !== promptId) } });
  try {
    await client.answerHostKey({ testId: test.id, promptId, trust });
  } catch (error) {
    useClusters.setState({ error: errorText(error) });
  }
}

export function stopPolling(): void {
  clearTimeout(polling);
}

/** The view opened again while a test runs: follow it again. */
export function resumePolling(): void {
  const test = useClusters.getState().test;
  if (test?.state === 'running') void poll(test.id);
}
