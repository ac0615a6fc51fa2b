import { create } from 'zustand';
import type { AddHostsRequest, ClusterListing, ClusterSettingsRequest, ClusterTestStatus, EditHostRequest, HostFacts, ImportHostsRequest } from '../../../engine/protocol/clusters';
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
   * The outcome of each cluster's last finished test, as stored with the cluster (it outlives the
   * studio session) and as far as it still holds for the hosts as they are now: Deploy is held back
   * while it failed, and pricing on the cluster uses the hosts' cores.
   */
  lastTests: Record<string, LastTest>;
}

export interface LastTest {
  /** When it finished, ms since the epoch. */
  at: number;
  ready: number;
  /** Hosts it tested that are still there as they were (added or changed ones are `untested`). */
  hosts: number;
  facts: Record<string, HostFacts>;
  /** The hosts that failed, with their first failed step. */
  failed: Array<{ host: string; why: string }>;
  untested: string[];
}

export const useClusters = create<ClustersState>()(() => ({ lastTests: {} }));

// The Plan panel prices plans on stored clusters too: keep their specs in step with the listing and tests.
useClusters.subscribe((s, before) => {
  if (s.listing === before.listing && s.lastTests === before.lastTests) return;
  const facts = Object.fromEntries(Object.entries(s.lastTests).map(([name, t]) => [name, Object.fromEntries(Object.entries(t.facts).map(([host, f]) => [host, { cpus: f.cpus, gpus: f.gpus }]))]));
  setStoredClusters(s.listing?.clusters ?? [], facts);
});

/** Each cluster's stored last test, read from the listing. */
function lastTestsOf(listing: ClusterListing): Record<string, LastTest> {
  return Object.fromEntries(
    listing.clusters.flatMap((c) => {
      const t = c.lastTest;
      if (!t) return [];
      const last: LastTest = {
        at: t.at,
        ready: t.hosts.filter((h) => h.ok).length,
        hosts: t.hosts.length,
        facts: Object.fromEntries(t.hosts.flatMap((h) => (h.facts ? [[h.host, h.facts]] : []))),
        failed: t.hosts.filter((h) => !h.ok).map((h) => ({ host: h.host, why: h.why ?? 'failed' })),
        untested: t.untested,
      };
      return [[c.name, last]];
    }),
  );
}

/** The state a new listing brings: the listing and the tests stored with its clusters. */
const withListing = (listing: ClusterListing) => ({ listing, lastTests: lastTestsOf(listing) });

/** Forget the shown connection test of a cluster that changed (its stored test says what still holds). */
function dropShownTest(name: string): void {
  useClusters.setState((s) => (s.test?.cluster === name ? { test: undefined } : {}));
}

const POLL_MS = 300;
let polling: ReturnType<typeof setTimeout> | undefined;
/** The one polling loop that may go on: a newer start (or a stop) ends the older one, even mid-request. */
let pollLoop = 0;

export async function refreshClusters(): Promise<void> {
  const client = studioClient();
  if (!client) return;
  try {
    const listing = await client.listClusters();
    const selected = useClusters.getState().selected;
    useClusters.setState({ ...withListing(listing), error: undefined, selected: selected && listing.clusters.some((c) => c.name === selected) ? selected : listing.clusters[0]?.name });
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
    useClusters.setState({ ...withListing(listing), selected: request.cluster, error: undefined, test: undefined, message: `Saved ${request.hosts.length} host${request.hosts.length === 1 ? '' : 's'} in ${request.cluster}. Test the connection next.` });
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
    useClusters.setState({ ...withListing(listing), error: undefined, message });
    after(listing);
    return undefined;
  } catch (error) {
    return errorText(error);
  }
}

export function renameCluster(cluster: string, to: string): Promise<string | undefined> {
  return change((c) => c.renameCluster({ cluster, to }), `Cluster ${cluster} is now ${to}.`, () => {
    dropShownTest(cluster);
    useClusters.setState({ selected: to });
  });
}

export function removeCluster(cluster: string): Promise<string | undefined> {
  return change((c) => c.removeCluster(cluster), `Cluster ${cluster} removed.`, (listing) => {
    dropShownTest(cluster);
    useClusters.setState({ selected: listing.clusters[0]?.name });
  });
}

export function editHost(request: EditHostRequest): Promise<string | undefined> {
  return change((c) => c.editClusterHost(request), `Host ${request.host} of ${request.cluster} changed. Test the connection again.`, () => dropShownTest(request.cluster));
}

export function removeHost(cluster: string, host: string): Promise<string | undefined> {
  return change((c) => c.removeClusterHost({ cluster, host }), `Host ${host} removed from ${cluster}.`, (listing) => {
    dropShownTest(cluster);
    if (!listing.clusters.some((c) => c.name === cluster)) useClusters.setState({ selected: listing.clusters[0]?.name, message: `Host ${host} was the last of ${cluster}: the cluster is removed.` });
  });
}

/** Set the cluster's remote directory, setup commands and env as a whole. */
export function setClusterSettings(request: ClusterSettingsRequest): Promise<string | undefined> {
  return change((c) => c.setClusterSettings(request), `Settings of ${request.cluster} saved: they apply from the next deploy.`);
}

export async function importHosts(request: ImportHostsRequest): Promise<boolean> {
  const client = studioClient();
  if (!client) return false;
  try {
    const result = await client.importClusterHosts(request);
    const warnings = result.warnings.length ? ` Warnings: ${result.warnings.join(' ')}` : '';
    useClusters.setState({ ...withListing(result), selected: request.cluster, error: undefined, test: undefined, message: `Imported ${result.imported.join(', ')} from ${result.from}.${warnings}` });
    return true;
  } catch (error) {
    useClusters.setState({ error: errorText(error), message: undefined });
    return false;
  }
}

async function poll(testId: string, loop = ++pollLoop): Promise<void> {
  const client = studioClient();
  if (!client) return;
  clearTimeout(polling);
  try {
    const test = await client.clusterTestStatus(testId);
    if (loop !== pollLoop) return;
    if (useClusters.getState().test?.id !== testId && useClusters.getState().test) return;
    useClusters.setState({ test });
    if (test.state === 'running') {
      polling = setTimeout(() => void poll(testId, loop), POLL_MS);
      return;
    }
    // The finished test is stored with the cluster (with a new link matrix, if the survey measured one).
    await refreshClusters();
    if (test.notStored) useClusters.setState({ error: `This test's result could not be stored with the cluster: ${test.notStored}` });
  } catch (error) {
    useClusters.setState({ error: errorText(error) });
  }
}

export async function testCluster(name: string): Promise<void> {
  const client = studioClient();
  if (!client) return;
  stopPolling();
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

function stopPolling(): void {
  pollLoop++;
  clearTimeout(polling);
}

/** The view opened again while a test runs: follow it again (one loop: a loop already going ends). */
export function resumePolling(): void {
  const test = useClusters.getState().test;
  if (test?.state === 'running') void poll(test.id);
}

/** Test a cluster from outside the Clusters view: open the view on it (where host keys are asked about) and start. */
export function testClusterInView(name: string, open: () => void): void {
  if (useClusters.getState().test?.state === 'running') return;
  selectCluster(name);
  open();
  void testCluster(name);
}
