import type { Launcher } from '../deploy/launcher.js';
import { LocalLauncher } from '../deploy/localLauncher.js';
import { SshLauncher, type SshLauncherOptions } from '../deploy/sshLauncher.js';
import type { DeployRecord } from './deployRecord.js';

/** The launcher that reaches a recorded job's hosts again (host keys must still match). */
export function launcherFor(record: DeployRecord, options: SshLauncherOptions = {}): Launcher {
  if (record.launcher === 'local') return new LocalLauncher();
  // Head first: SshLauncher treats its first host as the head.
  const hosts = [...record.hosts].sort((a, b) => Number(b.alias === record.head) - Number(a.alias === record.head));
  return new SshLauncher(hosts, { ...options, ...(record.settings ? { settings: record.settings } : {}) });
}
