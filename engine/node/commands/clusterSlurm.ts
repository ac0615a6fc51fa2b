import { SlurmSettingsSchema, type SlurmSettings } from '../../protocol/slurmSettings.js';
import type { ClusterSettings } from '../../protocol/clusterSettings.js';
import type { SshCluster } from '../hosts/clusterStore.js';
import { saveSlurmCluster } from '../hosts/slurmClusterStore.js';
import { slurmReport, type SlurmReport } from '../deploy/slurm/slurmReport.js';
import type { CommandIo } from './commandIo.js';
import { connectPrompts } from './connectPrompts.js';
import { endpointLabel, type SshHost } from '../hosts/host.js';
import { localSlurmControl, sshSlurmControl, type SlurmControl } from '../deploy/slurm/slurmControl.js';
import type { ConnectOptions } from '../deploy/ssh/connectHost.js';

/** `cluster add`'s Slurm options. */
export const SLURM_ADD_OPTIONS = {
  slurm: { type: 'string' },
  partition: { type: 'string' },
  account: { type: 'string' },
  gres: { type: 'string' },
  time: { type: 'string' },
  constraint: { type: 'string' },
} as const;

type SlurmValues = Partial<Record<keyof typeof SLURM_ADD_OPTIONS, string>>;

/** Whether `cluster add` was given any Slurm option (then it adds a Slurm cluster). */
export const wantsSlurm = (values: SlurmValues) => Object.keys(SLURM_ADD_OPTIONS).some((k) => values[k as keyof SlurmValues] !== undefined);

/** The Slurm options, checked by the schema; an error names the option and what to write. */
export function slurmSettingsFrom(values: SlurmValues): SlurmSettings {
  if (values.slurm === undefined) throw new Error('--partition, --account, --gres, --time and --constraint go with --slurm local (this machine is the login node) or --slurm user@login-host.');
  const given = Object.fromEntries(Object.entries({ login: values.slurm === 'local' ? 'local' : 'ssh', partition: values.partition, account: values.account, gres: values.gres, time: values.time, constraint: values.constraint }).filter(([, v]) => v !== undefined));
  const parsed = SlurmSettingsSchema.safeParse(given);
  if (!parsed.success) {
    const issue = parsed.error.issues[0];
    const option = issue.path[0] === 'login' ? 'slurm' : String(issue.path[0]);
    throw new Error(`--${option} ${given[option === 'slurm' ? 'login' : option] ?? ''}: ${issue.message}.`);
  }
  return parsed.data;
}

export function addSlurmCluster(name: string, values: SlurmValues, settings: ClusterSettings, io: CommandIo, login?: SshHost): number {
  const slurm = slurmSettingsFrom(values);
  saveSlurmCluster(name, slurm, settings, login);
  io.out(`Cluster ${name}: Slurm, from ${loginLine(login)} (${slurmLine(slurm)}) saved.\n`);
  io.out(`Check it with: shoal cluster test ${name}\n`);
  return 0;
}

/** Where Slurm's commands run, as messages name it. */
export function loginLine(login: SshHost | undefined): string {
  return login ? `login host ${login.user}@${endpointLabel(login)}` : 'this machine as its login node';
}

/** The login node's control for a stored Slurm cluster. */
export function slurmControlOf(cluster: SshCluster, connect: ConnectOptions = {}): SlurmControl {
  const env = cluster.env ?? {};
  if (cluster.slurm?.login !== 'ssh') return localSlurmControl(env);
  if (!cluster.hosts[0]) throw new Error(`Cluster ${cluster.name} is reached through an SSH login host, but its record names none: add it again with shoal cluster add ${cluster.name} --slurm user@login-host.`);
  return sshSlurmControl(cluster.hosts[0], env, connect);
}

/** What every allocation asks for, as `cluster add|show` print it. */
export function slurmLine(s: SlurmSettings): string {
  const parts = [s.partition ? `partition ${s.partition}` : 'default partition', s.account && `account ${s.account}`, s.gres && `gres ${s.gres}`, s.time && `time ${s.time}`, s.constraint && `constraint ${s.constraint}`];
  return parts.filter(Boolean).join(', ');
}

/** `cluster test` of a Slurm cluster: sinfo per partition, then what would block a job, each with what to do. Exit 1 when something blocks. */
export async function runSlurmClusterTest(cluster: SshCluster, options: { json: boolean; trustNew: boolean }, io: CommandIo): Promise<number> {
  const control = slurmControlOf(cluster, connectPrompts(io, options.trustNew));
  let report: SlurmReport;
  try {
    report = await slurmReport(control, cluster.slurm!);
  } finally {
    control.close();
  }
  if (options.json) io.out(JSON.stringify({ cluster: cluster.name, ...report }, null, 2) + '\n');
  else io.out(reportText(cluster.name, report));
  return report.ok ? 0 : 1;
}

function reportText(name: string, r: SlurmReport): string {
  const lines = [`Cluster ${name} (Slurm${r.clusterName ? ` ${r.clusterName}` : ''}):`];
  lines.push(`  ${'partition'.padEnd(12)} ${'avail'.padEnd(6)} ${'nodes'.padEnd(6)} ${'state'.padEnd(10)} ${'CPUs'.padEnd(5)} ${'memory'.padEnd(9)} ${'GPUs (gres)'.padEnd(12)} max time`);
  for (const p of r.partitions) {
    lines.push(`  ${(p.name + (p.isDefault ? '*' : '')).padEnd(12)} ${p.avail.padEnd(6)} ${String(p.nodes).padEnd(6)} ${p.state.padEnd(10)} ${String(p.cpus).padEnd(5)} ${`${p.memoryMb} MB`.padEnd(9)} ${p.gres.padEnd(12)} ${p.maxTime}`);
  }
  if (r.blockers.length === 0) lines.push(`Ready: ${r.check}`);
  for (const b of r.blockers) lines.push(`  ✗ ${b}`);
  for (const w of r.warnings) lines.push(`  warning: ${w}`);
  return lines.join('\n') + '\n';
}
