import type { Launcher } from '../deploy/launcher.js';
import { LocalLauncher } from '../deploy/localLauncher.js';
import { SshLauncher, type SshLauncherOptions } from '../deploy/sshLauncher.js';
import { SlurmLauncher } from '../deploy/slurm/slurmLauncher.js';
import type { DeployRecord } from './deployRecord.js';

/** The launcher that reaches a recorded job's hosts again (host keys must still match). */
export function launcherFor(record: DeployRecord, options: SshLauncherOptions = {}): Launcher {
  if (record.launcher === 'local') return new LocalLauncher();
  if (record.launcher === 'slurm') return slurmLauncherFor(record, options);
  // Head first: SshLauncher treats its first host as the head.
  const hosts = [...record.hosts].sort((a, b) => Number(b.alias === record.head) - Number(a.alias === record.head));
  return new SshLauncher(hosts, { ...options, ...(record.settings ? { settings: record.settings } : {}) });
}

function slurmLauncherFor(record: DeployRecord, connect: SshLauncherOptions): SlurmLauncher {
  const s = record.slurm;
  if (!s) throw new Error(`Job ${record.jobId}'s record says it runs on Slurm but names no allocation; its deploy.json may have been edited.`);
  const allocation = { id: s.allocation, nodes: s.nodes, ...(s.endTime ? { endTime: s.endTime } : {}) };
  return new SlurmLauncher(s.settings, { allocation, connect, ...(s.login ? { login: s.login } : {}), ...(record.settings ? { settings: record.settings } : {}) });
}
