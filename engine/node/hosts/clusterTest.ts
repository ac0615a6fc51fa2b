import { preflightHosts, type HostPreflight, type PreflightEvent } from '../deploy/ssh/preflight.js';
import type { TrustRequest } from '../deploy/ssh/connectHost.js';
import type { CommandIo } from './clusterCommand.js';
import type { SshCluster } from './clusterStore.js';
import { askLine, askYesNo } from './ttyPrompt.js';

const MARK: Record<PreflightEvent['status'], string> = { running: '…', ok: 'ok', warn: 'WARN', fail: 'FAIL', skipped: 'skip' };

/**
 * `shoal cluster test`: preflight every host, a progress line per step on stderr (stdout stays clean for
 * --json), then a summary. Exit 1 when any host failed a step.
 */
export async function runClusterTest(cluster: SshCluster, options: { trustNew: boolean; json: boolean }, io: CommandIo): Promise<number> {
  if (cluster.hosts.length === 0) throw new Error(`Cluster ${cluster.name} has no hosts. Add some with: shoal cluster add ${cluster.name} --host user@address[:port]`);
  const width = Math.max(...cluster.hosts.map((h) => h.alias.length));
  const onProgress = (e: PreflightEvent) => {
    // Multi-line details (the changed-host-key warning) stay readable under their host.
    const [first, ...more] = e.detail.split('\n');
    io.err(`${e.host.padEnd(width)}  ${e.step.padEnd(13)} ${MARK[e.status].padEnd(4)} ${first}\n`);
    for (const line of more) io.err(`${' '.repeat(width + 21)}${line}\n`);
  };
  // Hosts behind one jump host all meet its key: ask about each key once.
  const decisions = new Map<string, Promise<boolean>>();
  const trustRequest = (r: TrustRequest): Promise<boolean> => {
    const id = `${r.address}:${r.port} ${r.fingerprint}`;
    if (!decisions.has(id)) decisions.set(id, decideTrust(r));
    return decisions.get(id)!;
  };
  const decideTrust = async (r: TrustRequest): Promise<boolean> => {
    if (options.trustNew) {
      io.err(`Trusting the new host key of ${r.where}: ${r.keyType} ${r.fingerprint} (--trust-new).\n`);
      return true;
    }
    if (!io.interactive) return false;
    return askYesNo(`The host key of ${r.where} is not known yet.\n  ${r.keyType} ${r.fingerprint}\nCompare it with the host's (ssh-keygen -l -f /etc/ssh/ssh_host_*_key.pub on the host). Trust it?`);
  };
  // One question per key file, even when many hosts use the same key.
  const passphrases = new Map<string, Promise<string>>();
  const passphrase = io.interactive
    ? (keyPath: string) => {
        if (!passphrases.has(keyPath)) passphrases.set(keyPath, askLine(`Passphrase for ${keyPath}: `, true));
        return passphrases.get(keyPath)!;
      }
    : undefined;

  const results = await preflightHosts(cluster.hosts, { onProgress, trustRequest, ...(passphrase ? { passphrase } : {}) });
  const ok = results.every((r) => r.ok);
  if (options.json) io.out(JSON.stringify({ cluster: cluster.name, ok, hosts: results }, null, 2) + '\n');
  else io.out(summary(cluster.name, results));
  return ok ? 0 : 1;
}

function summary(name: string, results: HostPreflight[]): string {
  const ready = results.filter((r) => r.ok).length;
  const lines = [`Cluster ${name}: ${ready} of ${results.length} host${results.length === 1 ? '' : 's'} ready.`];
  for (const r of results) {
    if (!r.ok) {
      const failed = r.steps.filter((s) => s.status === 'fail');
      lines.push(`  ✗ ${r.host} (${r.where}): ${failed.map((s) => `${s.step}: ${s.detail.split('\n')[0]}`).join('; ')}`);
      continue;
    }
    const f = r.facts!;
    const facts = [
      `${f.os} ${f.arch}`,
      `${f.cpus ?? '?'} CPUs`,
      f.memoryBytes ? `${(f.memoryBytes / 1024 ** 3).toFixed(1)} GiB RAM` : 'RAM ?',
      `Node ${f.node?.version}`,
      f.gpus.length ? `${f.gpus.length} GPU${f.gpus.length === 1 ? '' : 's'} (${f.gpus[0].name})` : 'no GPU',
    ];
    lines.push(`  ✓ ${r.host} (${r.where}): ${facts.join(', ')}`);
    for (const w of r.steps.filter((s) => s.status === 'warn')) lines.push(`      warning, ${w.step}: ${w.detail}`);
  }
  return lines.join('\n') + '\n';
}
