import type { ClusterListing } from '../protocol/clusters.js';
import type { StudioApi } from '../protocol/studioApi.js';
import { ClusterTests } from './hosts/clusterTests.js';
import { loadClusterProfile } from './hosts/clusterProfile.js';
import { editHost, removeCluster, removeHost, renameCluster, setClusterSettings } from './hosts/clusterEdits.js';
import { currentTest } from './hosts/clusterTestRecord.js';
import { clusterSettingsOf, clustersFile, findCluster, loadClusters, saveClusterHosts } from './hosts/clusterStore.js';
import { hopLabel, hostsFromSpecs } from './hosts/hostSpecs.js';
import { importSshConfig } from './hosts/sshConfigImport.js';

type ClustersApi = Pick<
  StudioApi,
  'listClusters' | 'addClusterHosts' | 'importClusterHosts' | 'renameCluster' | 'removeCluster' | 'setClusterSettings' | 'editClusterHost' | 'removeClusterHost' | 'startClusterTest' | 'clusterTestStatus' | 'answerHostKey'
>;

function listing(): ClusterListing {
  return {
    file: clustersFile(),
    clusters: loadClusters().map((c) => {
      const links = storedLinks(c.name);
      const lastTest = currentTest(c.hosts, c.lastTest);
      return {
        name: c.name,
        hosts: c.hosts.map((h) => ({ alias: h.alias, user: h.user, address: h.address, port: h.port, identityFiles: h.identityFiles, useAgent: h.useAgent, jump: h.jump.map(hopLabel) })),
        ...(links ? { links } : {}),
        ...(Object.keys(clusterSettingsOf(c)).length ? { settings: clusterSettingsOf(c) } : {}),
        ...(lastTest ? { lastTest } : {}),
      };
    }),
  };
}

/** The cluster's stored link matrix; an unreadable profile file is left out (the next test rewrites it) rather than hiding every cluster. */
function storedLinks(name: string) {
  try {
    return loadClusterProfile(name);
  } catch {
    return undefined;
  }
}

/**
 * The Cluster view's part of the StudioApi, backed by the same store and preflight as `shoal cluster`:
 * clusters.json (key paths only), ssh config import, and connection tests whose unknown host keys wait
 * for the user's answer in the studio's trust dialog.
 */
export function clustersService(): ClustersApi & { close(): void } {
  const tests = new ClusterTests();
  return {
    async listClusters() {
      return listing();
    },
    async addClusterHosts(request) {
      const r = request;
      const existing = findCluster(r.cluster)?.hosts ?? [];
      saveClusterHosts(r.cluster, hostsFromSpecs(r.hosts, { identityFile: r.identityFile, jump: r.jump, existing }), clusterSettingsOf(r));
      return listing();
    },
    async importClusterHosts(request) {
      const r = request;
      const imported = importSshConfig({ ...(r.sshConfig ? { file: r.sshConfig } : {}), ...(r.hosts?.length ? { only: r.hosts } : {}) });
      saveClusterHosts(r.cluster, imported.hosts);
      return { ...listing(), imported: imported.hosts.map((h) => h.alias), warnings: imported.warnings, from: imported.file };
    },
    async renameCluster(request) {
      const r = request;
      renameCluster(r.cluster, r.to);
      return listing();
    },
    async removeCluster(name) {
      removeCluster(name);
      return listing();
    },
    async setClusterSettings(request) {
      const { cluster, ...settings } = request;
      setClusterSettings(cluster, settings);
      return listing();
    },
    async editClusterHost(request) {
      const r = request;
      editHost(r.cluster, r.host, { address: r.address, identityFile: r.identityFile, jump: r.jump });
      return listing();
    },
    async removeClusterHost(request) {
      const r = request;
      removeHost(r.cluster, r.host);
      return listing();
    },
    async startClusterTest(name) {
      const cluster = findCluster(name);
      if (!cluster) throw new Error(`No cluster "${name}" in ${clustersFile()}.`);
      return { testId: tests.start(cluster) };
    },
    async clusterTestStatus(testId) {
      return tests.status(testId);
    },
    async answerHostKey(answer) {
      tests.answer(answer.testId, answer.promptId, answer.trust);
    },
    close: () => tests.close(),
  };
}
