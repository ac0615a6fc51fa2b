import { existsSync, readFileSync } from 'node:fs';
import { resolve } from 'node:path';
import { z } from 'zod';
import { ClusterSettingsSchema, type ClusterSettings } from '../../protocol/clusterSettings.js';
import type { SlurmSettings } from '../../protocol/slurmSettings.js';
import { clusterSettingsOf, loadClusters } from './clusterStore.js';
import { SshHostSchema, type SshHost } from './host.js';

const ClusterFileSchema = z.object({ name: z.string().min(1).optional(), hosts: z.array(SshHostSchema).min(1), ...ClusterSettingsSchema.shape });

export type ClusterChoice =
  | { kind: 'local'; name: 'local' }
  | { kind: 'ssh'; name: string; hosts: SshHost[]; settings: ClusterSettings }
  | { kind: 'slurm'; name: string; slurm: SlurmSettings; settings: ClusterSettings; /** Where Slurm's commands run over SSH (`slurm.login` "ssh"). */ login?: SshHost };

/**
 * What `--cluster` names: `local` (this machine), a JSON file `{ "hosts": [ … ] }` (hosts as in
 * clusters.json), or a cluster stored with `shoal cluster add|import`. The first host is the head.
 */
export function resolveClusterArg(arg: string | undefined): ClusterChoice {
  if (!arg) throw new Error('--cluster is required: a stored cluster (shoal cluster list), a cluster JSON file, or local.');
  if (arg === 'local') return { kind: 'local', name: 'local' };
  const path = resolve(arg);
  if (/\.json$/i.test(arg) || (arg.includes('/') && existsSync(path))) {
    let json: unknown;
    try {
      json = JSON.parse(readFileSync(path, 'utf8'));
    } catch (err) {
      throw new Error(`Cannot read the cluster file ${path}: ${(err as Error).message}`);
    }
    const parsed = ClusterFileSchema.safeParse(json);
    if (!parsed.success) {
      const issue = parsed.error.issues[0];
      throw new Error(`${path}: ${issue.path.join('.') || '(top level)'}: ${issue.message}. Expected { "hosts": [{ "alias", "address", "port", "user", "identityFiles" }], "remoteDir"?, "setup"?: [commands], "env"?: { NAME: value } }.`);
    }
    return { kind: 'ssh', name: parsed.data.name ?? path, hosts: parsed.data.hosts, settings: clusterSettingsOf(parsed.data) };
  }
  const clusters = loadClusters();
  const found = clusters.find((c) => c.name === arg);
  if (!found) throw new Error(`No cluster "${arg}". ${clusters.length ? `Clusters: ${clusters.map((c) => c.name).join(', ')}.` : 'Add one with: shoal cluster add <name> --host user@address[:port]'} (Or give a cluster JSON file, or local.)`);
  if (found.slurm) return { kind: 'slurm', name: found.name, slurm: found.slurm, settings: clusterSettingsOf(found), ...(found.slurm.login === 'ssh' && found.hosts[0] ? { login: found.hosts[0] } : {}) };
  if (found.hosts.length === 0) throw new Error(`Cluster ${arg} has no hosts. Add some with: shoal cluster add ${arg} --host user@address[:port]`);
  return { kind: 'ssh', name: found.name, hosts: found.hosts, settings: clusterSettingsOf(found) };
}
