import type { ClusterSettings } from '../../protocol/clusterSettings.js';
import type { SlurmSettings } from '../../protocol/slurmSettings.js';
import { loadClusters, saveClusters, type SshCluster } from './clusterStore.js';
import type { SshHost } from './host.js';

/**
 * Create or replace a Slurm cluster: its Slurm settings as a whole (what is left out goes back to
 * Slurm's defaults) with its login host when that is reached over SSH, its remote directory, setup
 * and env as `cluster add` sets them. A cluster of SSH
 * hosts is not turned into a Slurm one: that would leave its hosts unused without saying so.
 */
export function saveSlurmCluster(name: string, slurm: SlurmSettings, settings: ClusterSettings = {}, login?: SshHost): SshCluster {
  if ((slurm.login === 'ssh') !== (login !== undefined)) throw new Error(`A Slurm cluster with login "${slurm.login}" ${login ? 'takes no login host' : 'needs its login host'}.`);
  const clusters = loadClusters();
  let cluster = clusters.find((c) => c.name === name);
  if (cluster && cluster.hosts.length > 0 && !cluster.slurm) {
    throw new Error(`Cluster ${name} is a cluster of SSH hosts (${cluster.hosts.map((h) => h.alias).join(', ')}); give the Slurm cluster another name, or remove this one first (shoal cluster remove ${name}).`);
  }
  if (!cluster) {
    cluster = { name, hosts: [] };
    clusters.push(cluster);
  }
  cluster.slurm = slurm;
  cluster.hosts = login ? [login] : [];
  if (settings.remoteDir) cluster.remoteDir = settings.remoteDir;
  if (settings.setup?.length) cluster.setup = settings.setup;
  if (settings.env && Object.keys(settings.env).length) cluster.env = { ...cluster.env, ...settings.env };
  saveClusters(clusters);
  return cluster;
}
