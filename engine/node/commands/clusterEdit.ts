import { parseArgs } from 'node:util';
import { EditHostRequestSchema } from '../../protocol/clusters.js';
import { editHost, removeCluster, removeHost, renameCluster } from '../hosts/clusterEdits.js';
import { endpointLabel } from '../hosts/host.js';
import { clusterName, UsageError } from './clusterUsage.js';
import type { CommandIo } from './commandIo.js';

/** `shoal cluster rename|remove|edit`: the same changes as the studio's Cluster view (hosts/clusterEdits.ts). */
export function runClusterEdit(sub: 'rename' | 'remove' | 'edit', args: string[], io: CommandIo): number {
  if (sub === 'rename') {
    const { positionals } = parseArgs({ args, allowPositionals: true, options: {} });
    const [from, to, extra] = positionals;
    if (!to) throw new UsageError('Give the cluster and its new name: shoal cluster rename <name> <new-name>.');
    if (extra) throw new UsageError(`Unexpected argument "${extra}".`);
    renameCluster(clusterName(from), clusterName(to));
    io.out(`Cluster ${from} is now ${to}.\n`);
    return 0;
  }
  if (sub === 'remove') {
    const { values, positionals } = parseArgs({ args, allowPositionals: true, options: { host: { type: 'string', multiple: true } } });
    const name = clusterName(positionals[0]);
    if (positionals.length > 1) throw new UsageError(`Unexpected argument "${positionals[1]}".`);
    if (!values.host?.length) {
      removeCluster(name);
      io.out(`Cluster ${name} removed (with its measured links).\n`);
      return 0;
    }
    for (const alias of values.host) {
      const { clusterRemoved } = removeHost(name, alias);
      io.out(`Host ${alias} removed from ${name}.${clusterRemoved ? ` It was the last one: cluster ${name} is removed.` : ''}\n`);
      if (clusterRemoved) break;
    }
    return 0;
  }
  const { values, positionals } = parseArgs({ args, allowPositionals: true, options: { host: { type: 'string' }, address: { type: 'string' }, identity: { type: 'string' }, jump: { type: 'string' } } });
  const name = clusterName(positionals[0]);
  if (positionals.length > 1) throw new UsageError(`Unexpected argument "${positionals[1]}".`);
  if (!values.host) throw new UsageError('Name the host to change: --host <alias> (shoal cluster show <name> lists them).');
  if (!values.address) throw new UsageError('Give the host\'s address: --address user@address[:port] (its current one to keep it).');
  // The same checks, and messages, as the studio's form.
  const parsed = EditHostRequestSchema.safeParse({ cluster: name, host: values.host, address: values.address, identityFile: values.identity, jump: values.jump });
  // A bad value, not a bad command line: said alone (exit 1), without the usage.
  if (!parsed.success) throw new Error(parsed.error.issues.map((i) => `--${String(i.path[0] === 'identityFile' ? 'identity' : i.path[0])}: ${i.message}`).join('; '));
  const host = editHost(name, values.host, { address: parsed.data.address, identityFile: parsed.data.identityFile, jump: parsed.data.jump });
  const via = host.jump.length ? ` via ${host.jump.map((j) => `${j.user}@${endpointLabel(j)}`).join(' → ')}` : '';
  io.out(`Host ${host.alias} of ${name}: ${host.user}@${endpointLabel(host)}${via}${host.identityFiles.length ? `, key ${host.identityFiles.join(', ')}` : ', ssh-agent / default keys'}. Check it with: shoal cluster test ${name}\n`);
  return 0;
}
