import { existsSync, readdirSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, test } from 'vitest';
import { runClusterCommand } from '../../engine/node/commands/cluster.js';
import { runDeployCommand } from '../../engine/node/commands/deploy.js';
import { runJobsCommand, type JobSummary } from '../../engine/node/commands/jobs.js';
import { runStopCommand } from '../../engine/node/commands/stop.js';
import type { StartedProcess } from '../../engine/node/deploy/launcher.js';
import { hostHome, removeHomes, useTempHome } from '../support/homes.js';
import { makeUserKey, startSshd, stopAllSshd, type PrivateSshd, type UserKey } from '../support/sshd.js';
import { jsonLines, runCommand as run, stopDeployedJobs } from '../support/commandRun.js';

/**
 * Three real OpenSSH servers on 127.0.0.2–4 that share ONE home directory, as the nodes of a cluster
 * with an NFS home do: the cluster's remote directory is detected as shared (uploaded once), each host
 * keeps its job state in a folder of its own (jobs/<id>/<host>/), so `jobs` counts each process once
 * and `stop` ends every process on every host. The cluster's setup commands run on every host at
 * deploy and its env reaches every process; a failing setup command is reported per host.
 */

let env: ReturnType<typeof useTempHome>;
let key: UserKey;
let servers: PrivateSshd[];
let home: string;
const aliases = ['n2', 'n3', 'n4'];
const remote = () => join(home, 'nfs-shoal');

beforeAll(async () => {
  env = useTempHome();
  process.env.SHOAL_DATA_DIR = join(env.home, 'data');
  key = makeUserKey(join(env.home, 'keys'), 'id_nfs');
  home = hostHome('nfs');
  servers = await Promise.all(aliases.map((_, i) => startSshd({ address: `127.0.0.${i + 2}`, authorizedKeys: [key.publicKey], home })));
});

afterAll(async () => {
  await stopDeployedJobs();
  await stopAllSshd();
  removeHomes([home]);
  delete process.env.SHOAL_DATA_DIR;
  env?.restore();
});

/** Whether a process runs, and its environment (the job's process group leaders are ours). */
function environOf(pid: number): string | undefined {
  try {
    return readFileSync(`/proc/${pid}/environ`, 'latin1');
  } catch {
    return undefined;
  }
}

async function addCluster(name: string, ...extra: string[]): Promise<void> {
  const hosts = servers.flatMap((s) => ['--host', `${s.user}@${s.address}:${s.port}`]);
  const c = await run(runClusterCommand, 'add', name, ...hosts, '--identity', key.path, ...extra);
  expect(c.err).toBe('');
  expect(c.code).toBe(0);
}

describe('a remote directory shared by every host (one home)', () => {
  test('deploy uploads once, keeps job state per host, counts each agent once; setup and env reach every host; stop ends all', async () => {
    await addCluster('nfs', '--remote-dir', '~/nfs-shoal/', '--setup', 'echo "setup on $SSH_CONNECTION with $FLAVOR" >> ~/setup.log', '--setup', 'cd /; echo "now in $(pwd)"', '--env', 'FLAVOR=vanilla bean');
    const show = await run(runClusterCommand, 'show', 'nfs');
    expect(show.out).toContain('remote directory: ~/nfs-shoal\n');
    expect(show.out).toContain('env FLAVOR=vanilla bean');
    // Host aliases are the addresses: rename them in what follows.
    const [h2, h3, h4] = servers.map((s) => s.address);

    const d = await run(runDeployCommand, '--cluster', 'nfs', '--model', 'mlp', '--plan', 'pp2-dp2', '--steps', '100000', '--trust-new', '--detach', '--json');
    expect(d.err).not.toContain('shoal deploy:');
    expect(d.code).toBe(0);
    const { jobId, processes } = jsonLines<{ type: string; jobId: string; processes: StartedProcess[] }>(d.out).find((e) => e.type === 'deployed')!;
    // Uploaded by the first host only; the others say they share the folder with it.
    expect(d.err).toMatch(new RegExp(`^${h2.replace(/\./g, '\\.')}\\s+upload\\s+ok\\s+uploaded to ~/nfs-shoal/agent/`, 'm'));
    for (const h of [h3, h4]) expect(d.err).toMatch(new RegExp(`^${h.replace(/\./g, '\\.')}\\s+upload\\s+skip\\s+shares ~/nfs-shoal with ${h2.replace(/\./g, '\\.')}`, 'm'));
    expect(readdirSync(join(remote(), 'agent')).filter((f) => !f.startsWith('.'))).toHaveLength(1);
    expect(readdirSync(remote()).filter((f) => f.startsWith('.share-'))).toEqual([]);
    // Nothing went to the default ~/.shoal.
    expect(existsSync(join(home, '.shoal'))).toBe(false);

    // Setup ran once per host, in its own shell, with the cluster's env; its output was progress.
    const setupLog = readFileSync(join(home, 'setup.log'), 'utf8').trim().split('\n');
    expect(setupLog).toHaveLength(3);
    for (const s of servers) expect(setupLog.filter((l) => l.includes(` ${s.address} ${s.port}`) && l.endsWith('with vanilla bean'))).toHaveLength(1);
    expect(d.err).toMatch(/setup\s+\[2\/2\] now in \//);

    // Each host's state in its own folder: pids, and the secret only on the head's.
    const jobs = join(remote(), 'jobs', jobId);
    expect(readdirSync(jobs).sort()).toEqual([h2, h3, h4].sort());
    const pids = (h: string) => readdirSync(join(jobs, h)).filter((f) => f.endsWith('.pid')).sort();
    expect(pids(h2)).toEqual(['agent-0.pid', 'agent-3.pid', 'coordinator.pid']);
    expect(pids(h3)).toEqual(['agent-1.pid']);
    expect(pids(h4)).toEqual(['agent-2.pid']);
    expect(existsSync(join(jobs, h2, 'coordinator.config'))).toBe(true);

    // Every process got the cluster's env.
    for (const p of processes) expect(environOf(p.pid), `${p.name} on ${p.target}`).toContain('\0FLAVOR=vanilla bean\0');

    const listed = (JSON.parse((await run(runJobsCommand, '--json')).out) as JobSummary[]).find((j) => j.jobId === jobId)!;
    expect(listed.state).toBe('running');
    expect(listed.detail).toContain('4 of 4 agent processes alive');

    const s = await run(runStopCommand, jobId);
    expect(s.code).toBe(0);
    for (const p of processes) expect(environOf(p.pid), `${p.name} on ${p.target} after stop`).toBeUndefined();
    expect(existsSync(jobs)).toBe(false);
    expect(existsSync(join(remote(), 'runs', jobId, 'coordinator.log'))).toBe(true);
    const after = (JSON.parse((await run(runJobsCommand, '--json')).out) as JobSummary[]).find((j) => j.jobId === jobId)!;
    expect(after.state).toBe('stopped');
  });

  test('a failing setup command stops the deploy, reported per host: which command, its exit code, its last lines', async () => {
    await addCluster('broken', '--setup', 'true', '--setup', 'echo preparing the frobnicator; echo frobnicator missing >&2; exit 7');
    const d = await run(runDeployCommand, '--cluster', 'broken', '--model', 'mlp', '--plan', 'pp1-dp2', '--steps', '10', '--trust-new', '--detach');
    expect(d.code).toBe(1);
    for (const s of servers) {
      expect(d.err).toContain(`${s.address} (${s.user}@${s.address}:${s.port}), setup: setup command 2 of 2 (\`echo preparing the frobnicator; echo frobnicator missing >&2; exit 7\`) exited with code 7; its last lines:\n    preparing the frobnicator\n    frobnicator missing`);
    }
    expect(d.err).toContain('Fix the command');
  });

  test('cluster add refuses a bad remote directory and env, saying what to write', async () => {
    const bad = await run(runClusterCommand, 'add', 'nfs', '--remote-dir', 'shoal-files');
    expect(bad.code).toBe(1);
    expect(bad.err).toContain('--remote-dir shoal-files: the remote directory must start with ~/');
    const space = await run(runClusterCommand, 'add', 'nfs', '--remote-dir', '/scratch/my files');
    expect(space.err).toContain('no spaces');
    const reserved = await run(runClusterCommand, 'add', 'nfs', '--env', 'SHOAL_X=1');
    expect(reserved.err).toContain('--env SHOAL_X: SHOAL_*, NODE_PATH and HOME are set by Shoal');
    const noValue = await run(runClusterCommand, 'add', 'nfs', '--env', 'FLAVOR');
    expect(noValue.err).toContain('--env "FLAVOR" is not NAME=value');
  });
});
