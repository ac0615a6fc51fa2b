import { create } from 'zustand';
import type { AddHostsRequest, ClusterListing, ClusterTestStatus, ImportHostsRequest } from '../../../engine/protocol/clusters';
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
}

export const useClusters = create<ClustersState>()(() => ({}));

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

export async function addHosts(request: AddHostsRequest): Promise<boolean> {
  const client = studioClient();
  if (!client) return false;
  try {
    const listing = await client.addClusterHosts(request);
    useClusters.setState({ listing, selected: request.cluster, error: undefined, test: undefined, message: `Saved ${request.hosts.length} host${request.hosts.length === 1 ? '' : 's'} in ${request.cluster}. Test the connection next.` });
    return true;
  } catch (error) {
    useClusters.setState({ error: errorText(error), message: undefined });
    return false;
  }
}

export async function importHosts(request: ImportHostsRequest): Promise<boolean> {
  const client = studioClient();
  if (!client) return false;
  try {
    const result = await client.importClusterHosts(request);
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
