import { preflightHosts, type HostPreflight, type PreflightEvent } from '../deploy/ssh/preflight.js';
import type { SshCluster } from '../hosts/clusterStore.js';
import { linkReport } from '../hosts/linkReport.js';
import { storeClusterTest } from '../hosts/storeClusterTest.js';
import { surveyAfterPreflight } from '../hosts/surveyAfterPreflight.js';
import type { SurveyEvent } from '../hosts/surveyLinks.js';
import type { CommandIo } from './commandIo.js';
import { connectPrompts } from './connectPrompts.js';

const MARK: Record<PreflightEvent['status'] | SurveyEvent['status'], string> = { running: '…', ok: 'ok', warn: 'WARN', fail: 'FAIL', skipped: 'skip', progress: '…' };

/**
 * `shoal cluster test`: preflight every host, a progress line per step on stderr (stdout stays clean for
 * --json), then — unless `survey` is false — the link survey over the hosts that passed, when there are
 * two or more: their bandwidth and latency matrix is printed and stored as the cluster's profile. Exit 1
 * when any host failed a step or the survey failed.
 */
export async function runClusterTest(cluster: SshCluster, options: { trustNew: boolean; json: boolean; survey?: boolean }, io: CommandIo): Promise<number> {
  if (cluster.hosts.length === 0) throw new Error(`Cluster ${cluster.name} has no hosts. Add some with: shoal cluster add ${cluster.name} --host user@address[:port]`);
  const width = Math.max(5, ...cluster.hosts.map((h) => h.alias.length));
  const onProgress = (e: PreflightEvent | SurveyEvent) => {
    // Multi-line details (the changed-host-key warning) stay readable under their host.
    const [first, ...more] = e.detail.split('\n');
    io.err(`${e.host.padEnd(width)}  ${e.step.padEnd(13)} ${MARK[e.status].padEnd(4)} ${first}\n`);
    for (const line of more) io.err(`${' '.repeat(width + 21)}${line}\n`);
  };
  const prompts = connectPrompts(io, options.trustNew);

  const results = await preflightHosts(cluster.hosts, { onProgress, ...prompts });
  const ok = results.every((r) => r.ok);
  const survey = options.survey === false ? undefined : await surveyAfterPreflight(cluster, results, { onProgress, ...prompts });
  // Kept with the cluster: the studio shows the latest test and holds Deploy back while it failed.
  try {
    storeClusterTest(cluster, results, survey);
  } catch (err) {
    io.err(`The test's result could not be stored with cluster ${cluster.name}: ${(err as Error).message}\n`);
  }
  if (options.json) io.out(JSON.stringify({ cluster: cluster.name, ok, hosts: results, ...(survey ? { survey } : {}) }, null, 2) + '\n');
  else {
    io.out(summary(cluster.name, results));
    if (survey && 'profile' in survey) io.out(linkReport(survey.profile, survey.file));
    else if (survey && 'skipped' in survey) io.out(`Link survey skipped: ${survey.skipped}\n`);
    else if (survey) io.out(`Link survey failed: ${survey.error}\n`);
  }
  return ok && !(survey && 'error' in survey) ? 0 : 1;
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
