import { existsSync } from 'node:fs';
import { resolve } from 'node:path';
import { userInfo } from 'node:os';
import { parseArgs } from 'node:util';
import { ClusterSettingsSchema, parseEnvAssignment, type ClusterSettings } from '../../protocol/clusterSettings.js';
import { expandHome } from '../hosts/configDir.js';
import { clusterProfileFile, loadClusterProfile } from '../hosts/clusterProfile.js';
import { clustersFile, loadClusters, saveClusterHosts, type SshCluster } from '../hosts/clusterStore.js';
import { endpointLabel, parseHostSpec, type JumpHop, type SshHost } from '../hosts/host.js';
import { linkReport } from '../hosts/linkReport.js';
import { importSshConfig } from '../hosts/sshConfigImport.js';
import { runClusterEdit } from './clusterEdit.js';
import { runClusterTest } from './clusterTest.js';
import { processIo, type CommandIo } from './commandIo.js';
import { clusterName, UsageError } from './clusterUsage.js';
import { addSlurmCluster, loginLine, runSlurmClusterTest, SLURM_ADD_OPTIONS, slurmLine, wantsSlurm } from './clusterSlurm.js';

export const CLUSTER_USAGE = `Usage:
  shoal cluster add <name> --host user@address[:port] [--host …] [--identity key] [--jump user@jump[:port]]…
                    [--remote-dir ~/.shoal|/abs/path] [--setup 'command']… [--env NAME=value]…
  shoal cluster add <name> --slurm local|user@login-host[:port] [--partition P] [--account A] [--gres gpu:N] [--time HH:MM:SS]
                    [--constraint FEATURES] [--remote-dir …] [--setup …]… [--env …]…
  shoal cluster import --name <name> [--ssh-config file] [--hosts a,b]
  shoal cluster test <name> [--trust-new] [--json] [--no-survey]
  shoal cluster list [--json]
  shoal cluster show <name> [--json]
  shoal cluster rename <name> <new-name>
  shoal cluster remove <name> [--host alias]…
  shoal cluster edit <name> --host alias --address user@address[:port] [--identity key|''] [--jump user@jump[:port],…|'']
--identity is used for the hosts and their jump hosts; without it, ssh-agent and ~/.ssh/id_* are tried.
test preflights every host, then measures bandwidth and latency between every pair of hosts that passed
(agents are uploaded and run briefly); --no-survey skips that. show prints the hosts and the stored links.
--remote-dir: where Shoal keeps its files on the hosts (default ~/.shoal; hosts may share it, e.g. an NFS
home). --setup: a command run on every host at every deploy (repeat for several; they replace the
cluster's list). --env: a variable every process on the hosts gets (added by name). add on an existing
cluster may give only these. Setup commands and env are stored and shown in plain text: no secrets.
remove without --host removes the cluster and its measured links; with --host, those hosts only.
--slurm user@login-host[:port]: a Slurm cluster whose commands run on that login host over SSH (with
--identity, --jump and host keys as for --host; --env reaches Slurm's commands there too); --slurm local:
its login node is this machine. Each deploy asks it for an allocation (one node per agent) with these
options, and test reports sinfo per partition and what blocks a job.
edit changes one host: --identity '' or --jump '' clears the key or the jump chain; left out, they are kept.
`;

/** `shoal cluster …`: returns the exit code (0 ok, 1 a host failed or bad input, 2 usage). */
export async function runClusterCommand(args: string[], io: CommandIo = processIo): Promise<number> {
  const [sub, ...rest] = args;
  try {
    switch (sub) {
      case 'add':
        return addCommand(rest, io);
      case 'import':
        return importCommand(rest, io);
      case 'test':
        return await testCommand(rest, io);
      case 'list':
        return listCommand(rest, io);
      case 'show':
        return showCommand(rest, io);
      case 'rename':
      case 'remove':
      case 'edit':
        return runClusterEdit(sub, rest, io);
      case undefined:
      case 'help':
      case '--help':
        io.out(CLUSTER_USAGE);
        return sub === undefined ? 2 : 0;
      default:
        throw new UsageError(`Unknown cluster command "${sub}".`);
    }
  } catch (err) {
    if (err instanceof UsageError || (err as { code?: string }).code?.startsWith('ERR_PARSE_ARGS')) {
      io.err(`shoal cluster: ${(err as Error).message}\n${CLUSTER_USAGE}`);
      return 2;
    }
    io.err(`shoal cluster: ${(err as Error).message}\n`);
    return 1;
  }
}

function addCommand(args: string[], io: CommandIo): number {
  const { values, positionals } = parseArgs({
    args,
    allowPositionals: true,
    options: {
      host: { type: 'string', multiple: true },
      identity: { type: 'string', multiple: true },
      jump: { type: 'string', multiple: true },
      'remote-dir': { type: 'string' },
      setup: { type: 'string', multiple: true },
      env: { type: 'string', multiple: true },
      ...SLURM_ADD_OPTIONS,
    },
  });
  const name = clusterName(positionals[0]);
  if (positionals.length > 1) throw new UsageError(`Unexpected argument "${positionals[1]}".`);
  const settings = settingsFrom(values);
  const me = userInfo().username;
  const identityFiles = (values.identity ?? []).map((f) => {
    const path = resolve(expandHome(f));
    // Only the path is stored; the key itself stays where it is.
    if (!existsSync(path)) throw new Error(`Identity file ${path} does not exist.`);
    if (path.endsWith('.pub')) throw new Error(`${path} is a public key: give the private key file (without .pub).`);
    return path;
  });
  const jump: JumpHop[] = (values.jump ?? [])
    .flatMap((j) => j.split(','))
    .map((spec) => ({ ...parseHostSpec(spec.trim(), me), identityFiles }));
  const hostOf = (spec: string): SshHost => ({ ...parseHostSpec(spec, me), alias: parseHostSpec(spec, me).address, identityFiles, useAgent: true, jump });
  if (wantsSlurm(values)) {
    if (values.host?.length) throw new UsageError('A Slurm cluster has no --host: Slurm chooses its nodes. Give --slurm local (this machine is the login node) or --slurm user@login-host, or --host for a cluster of SSH hosts.');
    return addSlurmCluster(name, values, settings, io, values.slurm !== undefined && values.slurm !== 'local' ? hostOf(values.slurm) : undefined);
  }
  const known = loadClusters().some((c) => c.name === name);
  if (!values.host?.length && !(known && Object.keys(settings).length)) {
    throw new UsageError(known ? 'Give --host user@address[:port], or settings to change (--remote-dir, --setup, --env).' : 'Give at least one --host user@address[:port].');
  }
  const existing = loadClusters().find((c) => c.name === name)?.hosts ?? [];
  const hosts: SshHost[] = [];
  for (const spec of values.host ?? []) {
    const { user, address, port } = parseHostSpec(spec, me);
    // The same host twice would start two agents' worth of work on one machine that was meant for one.
    const twice = hosts.find((h) => h.address === address && h.port === port && h.user === user);
    if (twice) throw new Error(`--host ${spec} is given twice (${user}@${endpointLabel({ address, port })}): give each host once.`);
    // The alias is the address; a second host on the same address (another port) gets the port too.
    const taken = [...existing, ...hosts].some((h) => h.alias === address && (h.address !== address || h.port !== port));
    const alias = taken ? `${address}-${port}` : address;
    hosts.push({ alias, address, port, user, identityFiles, useAgent: true, jump });
  }
  const cluster = saveClusterHosts(name, hosts, settings);
  if (hosts.length) io.out(`Cluster ${name}: ${hosts.map((h) => `${h.user}@${endpointLabel(h)}`).join(', ')} saved (${cluster.hosts.length} host${cluster.hosts.length === 1 ? '' : 's'} in all).\n`);
  if (Object.keys(settings).length) io.out(settingsLines(cluster).replace(/^/, `Cluster ${name}:\n`));
  io.out(`Check the hosts with: shoal cluster test ${name}\n`);
  return 0;
}

/** --remote-dir, --setup and --env, checked by the cluster schema; an error names the option and what to write. */
function settingsFrom(values: { 'remote-dir'?: string; setup?: string[]; env?: string[] }): ClusterSettings {
  const env = Object.fromEntries((values.env ?? []).map(parseEnvAssignment));
  const parsed = ClusterSettingsSchema.safeParse({
    ...(values['remote-dir'] !== undefined ? { remoteDir: values['remote-dir'] } : {}),
    ...(values.setup?.length ? { setup: values.setup } : {}),
    ...(Object.keys(env).length ? { env } : {}),
  });
  if (!parsed.success) {
    const issue = parsed.error.issues[0];
    const option = issue.path[0] === 'remoteDir' ? `--remote-dir ${values['remote-dir']}` : issue.path[0] === 'setup' ? `--setup${issue.path.length > 1 ? ` (#${Number(issue.path[1]) + 1})` : ''}` : '--env';
    throw new Error(`${option}: ${issue.message}.`);
  }
  return parsed.data;
}

/** A cluster's settings as `show` and `add` print them (env values too: they are documented as not secret). */
function settingsLines(c: SshCluster): string {
  const lines = [`  remote directory: ${c.remoteDir ?? '~/.shoal (default)'}`];
  for (const [i, cmd] of (c.setup ?? []).entries()) lines.push(`  setup ${i + 1}: ${cmd}`);
  for (const [k, v] of Object.entries(c.env ?? {})) lines.push(`  env ${k}=${v}`);
  return lines.join('\n') + '\n';
}

function importCommand(args: string[], io: CommandIo): number {
  const { values, positionals } = parseArgs({
    args,
    allowPositionals: true,
    options: { name: { type: 'string' }, 'ssh-config': { type: 'string' }, hosts: { type: 'string' } },
  });
  if (positionals.length > 0) throw new UsageError(`Unexpected argument "${positionals[0]}".`);
  const name = clusterName(values.name);
  const only = values.hosts ? values.hosts.split(',').map((s) => s.trim()).filter(Boolean) : undefined;
  const imported = importSshConfig({ ...(values['ssh-config'] ? { file: values['ssh-config'] } : {}), ...(only ? { only } : {}) });
  for (const w of imported.warnings) io.err(`warning: ${w}\n`);
  const cluster = saveClusterHosts(name, imported.hosts);
  io.out(`Cluster ${name}: imported ${imported.hosts.length} host${imported.hosts.length === 1 ? '' : 's'} from ${imported.file}:\n`);
  for (const h of imported.hosts) {
    const via = h.jump.length > 0 ? ` via ${h.jump.map((j) => `${j.user}@${endpointLabel(j)}`).join(' → ')}` : '';
    io.out(`  ${h.alias}  ${h.user}@${endpointLabel(h)}${via}${h.identityFiles.length ? `  key ${h.identityFiles.join(', ')}` : ''}\n`);
  }
  io.out(`${cluster.hosts.length} host${cluster.hosts.length === 1 ? '' : 's'} in all. Check them with: shoal cluster test ${name}\n`);
  return 0;
}

function listCommand(args: string[], io: CommandIo): number {
  const { values, positionals } = parseArgs({ args, allowPositionals: true, options: { json: { type: 'boolean' } } });
  if (positionals.length > 0) throw new UsageError(`Unexpected argument "${positionals[0]}".`);
  const clusters = loadClusters();
  if (values.json) {
    io.out(JSON.stringify(clusters, null, 2) + '\n');
    return 0;
  }
  if (clusters.length === 0) {
    io.out(`No clusters yet (${clustersFile()}). Add one with: shoal cluster add <name> --host user@address[:port]\n`);
    return 0;
  }
  for (const c of clusters) {
    let links = '';
    try {
      const profile = loadClusterProfile(c.name);
      if (profile) links = `  (links measured ${profile.measuredAt}: shoal cluster show ${c.name})`;
    } catch (err) {
      // One unreadable profile must not hide the list of clusters.
      links = `  (${(err as Error).message})`;
    }
    io.out(`${c.name}${links}${c.slurm ? `  (Slurm: ${slurmLine(c.slurm)})` : ''}\n`);
    for (const h of c.hosts) io.out(`  ${h.alias}  ${h.user}@${endpointLabel(h)}${h.jump.length ? `  via ${h.jump.map((j) => endpointLabel(j)).join(' → ')}` : ''}\n`);
  }
  return 0;
}

/** One cluster: its hosts and the link matrix its last survey stored (or how to measure one). */
function showCommand(args: string[], io: CommandIo): number {
  const { values, positionals } = parseArgs({ args, allowPositionals: true, options: { json: { type: 'boolean' } } });
  const name = clusterName(positionals[0]);
  if (positionals.length > 1) throw new UsageError(`Unexpected argument "${positionals[1]}".`);
  const cluster = requireCluster(name);
  const profile = loadClusterProfile(name);
  if (values.json) {
    io.out(JSON.stringify({ ...cluster, links: profile ?? null }, null, 2) + '\n');
    return 0;
  }
  io.out(`${cluster.name}${cluster.slurm ? `  (Slurm from ${loginLine(cluster.slurm.login === 'ssh' ? cluster.hosts[0] : undefined)}: ${slurmLine(cluster.slurm)})` : ''}\n`);
  io.out(settingsLines(cluster));
  for (const h of cluster.hosts) io.out(`  ${h.alias}  ${h.user}@${endpointLabel(h)}${h.jump.length ? `  via ${h.jump.map((j) => endpointLabel(j)).join(' → ')}` : ''}\n`);
  io.out(profile ? linkReport(profile, clusterProfileFile(name)) : `No links measured yet. Measure them with: shoal cluster test ${name}\n`);
  return 0;
}

function requireCluster(name: string) {
  const cluster = loadClusters().find((c) => c.name === name);
  if (!cluster) {
    const names = loadClusters().map((c) => c.name);
    throw new Error(`No cluster "${name}". ${names.length ? `Clusters: ${names.join(', ')}.` : 'Add one with: shoal cluster add <name> --host user@address[:port]'}`);
  }
  return cluster;
}

async function testCommand(args: string[], io: CommandIo): Promise<number> {
  const { values, positionals } = parseArgs({ args, allowPositionals: true, options: { 'trust-new': { type: 'boolean' }, json: { type: 'boolean' }, 'no-survey': { type: 'boolean' } } });
  const name = clusterName(positionals[0]);
  if (positionals.length > 1) throw new UsageError(`Unexpected argument "${positionals[1]}".`);
  const cluster = requireCluster(name);
  if (cluster.slurm) return runSlurmClusterTest(cluster, { json: values.json === true, trustNew: values['trust-new'] === true }, io);
  return runClusterTest(cluster, { trustNew: values['trust-new'] === true, json: values.json === true, survey: values['no-survey'] !== true }, io);
}
