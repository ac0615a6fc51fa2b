import type { SlurmSettings } from '../../../protocol/slurmSettings.js';
import { sbatchArgs } from './allocation.js';
import type { SlurmControl } from './slurmControl.js';

/** One row of sinfo: a partition's nodes in one state. */
export interface PartitionRow {
  name: string;
  isDefault: boolean;
  /** up, down, drain, inact. */
  avail: string;
  maxTime: string;
  nodes: number;
  state: string;
  cpus: string;
  memoryMb: string;
  gres: string;
}

export interface SlurmReport {
  ok: boolean;
  clusterName?: string;
  partitions: PartitionRow[];
  /** What stops a job of this cluster's settings from being queued or run, each with what to do. */
  blockers: string[];
  warnings: string[];
  /** What the submit check said when nothing blocks (sbatch --test-only's estimate). */
  check?: string;
}

const said = (r: { stdout: string; stderr: string }) => (r.stderr.trim() || r.stdout.trim() || 'no output').split('\n').slice(-4).join(' ');

/**
 * What `cluster test` says of a Slurm cluster: sinfo's partitions (nodes, states, CPUs, memory, GPUs
 * as gres, the time limit), then what would block a job asking for what this cluster asks for: the
 * partition missing or not up, no node in a usable state, and whatever Slurm's own submit check
 * (`sbatch --test-only`, which applies the account, QOS and time limits) refuses.
 */
export async function slurmReport(control: SlurmControl, settings: SlurmSettings): Promise<SlurmReport> {
  const blockers: string[] = [];
  const warnings: string[] = [];
  const info = await control.run('sinfo', ['-h', '-o', '%P|%a|%l|%D|%T|%c|%m|%G']);
  if (info.code !== 0) return { ok: false, partitions: [], blockers: [`sinfo failed (exit ${info.code}): ${said(info)}. Is ${control.where} a Slurm login node, and is slurmctld up (scontrol ping)?`], warnings };
  const partitions = info.stdout
    .trim()
    .split('\n')
    .filter(Boolean)
    .map((line): PartitionRow => {
      const [p, avail, maxTime, nodes, state, cpus, memoryMb, gres] = line.split('|');
      return { name: p.replace(/\*$/, ''), isDefault: p.endsWith('*'), avail, maxTime, nodes: Number(nodes), state, cpus, memoryMb, gres };
    });
  const config = await control.run('scontrol', ['show', 'config']);
  const clusterName = /^ClusterName\s*=\s*(\S+)/m.exec(config.stdout)?.[1];
  const wanted = settings.partition ?? partitions.find((p) => p.isDefault)?.name;
  const rows = partitions.filter((p) => p.name === wanted);
  if (!wanted) blockers.push('the cluster has no default partition: give one with shoal cluster add <name> --slurm <login> --partition P');
  else if (rows.length === 0) blockers.push(`partition ${wanted} does not exist (partitions: ${[...new Set(partitions.map((p) => p.name))].join(', ') || 'none'}): give one of these with --partition`);
  else {
    if (!rows.some((r) => r.avail === 'up')) blockers.push(`partition ${wanted} is ${rows[0].avail}, not up: jobs wait until the administrators bring it up, or choose another partition with --partition`);
    const usable = rows.filter((r) => /^(idle|mixed|allocated|completing)/.test(r.state)).reduce((n, r) => n + r.nodes, 0);
    if (usable === 0) blockers.push(`no node of partition ${wanted} can run jobs (${rows.map((r) => `${r.nodes} ${r.state}`).join(', ')}): ask the administrators (sinfo -R says why nodes are down or drained)`);
  }
  const test = await control.run('sbatch', ['--test-only', ...sbatchArgs(settings, { nodes: 1, tasksPerNode: 1, name: 'shoal-test' }).filter((a) => a !== '--parsable')]);
  const check = said(test).replace(/^sbatch: /, '');
  if (test.code !== 0) blockers.push(`Slurm refuses a job with this cluster's settings: ${check}. Change them (shoal cluster add <name> --slurm <login> --account … --time … --partition …) or ask for the limit to be raised`);
  const assoc = await control.run('sacctmgr', ['-n', '-P', 'show', 'assoc', `user=${control.user}`, 'format=account,partition,qos,maxwall']).catch(() => undefined);
  if (!assoc || assoc.code !== 0) warnings.push('Slurm accounting (sacctmgr) is not reachable: account and QOS limits were checked only through the submit check above');
  else if (settings.account && !assoc.stdout.split('\n').some((l) => l.split('|')[0] === settings.account)) {
    blockers.push(`you have no association with account ${settings.account} (yours: ${[...new Set(assoc.stdout.trim().split('\n').map((l) => l.split('|')[0]).filter(Boolean))].join(', ') || 'none'}): give one of yours with --account`);
  }
  return { ok: blockers.length === 0, ...(clusterName ? { clusterName } : {}), partitions, blockers, warnings, ...(blockers.length === 0 ? { check } : {}) };
}
