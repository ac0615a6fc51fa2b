import { spawn } from 'node:child_process';
import { existsSync, readdirSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, test } from 'vitest';
import type { JobEvent } from '../../engine/protocol/events.js';
import { runClusterCommand } from '../../engine/node/commands/cluster.js';
import { runDeployCommand } from '../../engine/node/commands/deploy.js';
import { runAttachCommand } from '../../engine/node/commands/attach.js';
import { runJobsCommand, type JobSummary } from '../../engine/node/commands/jobs.js';
import { runPullCommand } from '../../engine/node/commands/pull.js';
import { runStopCommand } from '../../engine/node/commands/stop.js';
import { findDeployRecord } from '../../engine/node/jobs/deployRecord.js';
import { runCommand as run, jsonLines, stopDeployedJobs } from '../support/commandRun.js';
import { useTempHome } from '../support/homes.js';
import { makeUserKey, startSshd } from '../support/sshd.js';
import { slurmUnavailable, startSlurm, type PrivateSlurm } from '../support/slurm.js';
import { saveLayersModel, tf, twoInTwoOut, writeNpyData, TWO_IN_TWO_OUT_ARRAYS } from '../support/userModels.js';

/**
 * The Slurm launcher against a real Slurm: a private slurmctld and two slurmd (node1, node2) on this
 * machine, started here and stopped after. Jobs are deployed with the CLI's own commands.
 */

const unavailable = slurmUnavailable();
const cli = join(__dirname, '..', '..', 'dist', 'cli.cjs');
let slurm: PrivateSlurm;
let env: ReturnType<typeof useTempHome>;
const saved = process.env.SLURM_CONF;

const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

/** Processes started from this test's home (the agent bundle lives under it): none may outlive a stop. */
function jobProcesses(): string[] {
  const found: string[] = [];
  for (const pid of readdirSync('/proc').filter((d) => /^\d+$/.test(d))) {
    try {
      const cmd = readFileSync(`/proc/${pid}/cmdline`, 'utf8').replace(/\0/g, ' ');
      if (cmd.includes(join(env.home, '.shoal'))) found.push(`${pid} ${cmd}`);
    } catch {
      // Gone while we looked.
    }
  }
  return found;
}

const squeue = () => slurm.cmd('squeue', '-h', '-o', '%i %T %j').trim();

describe.skipIf(unavailable !== undefined)(`Slurm launcher on a real two-node Slurm${unavailable ? ` (skipped: ${unavailable})` : ''}`, () => {
  beforeAll(async () => {
    slurm = await startSlurm();
    process.env.SLURM_CONF = slurm.conf;
    env = useTempHome();
    process.env.SHOAL_DATA_DIR = join(env.home, 'data');
    // The cluster the deploy tests use, so that each test stands alone.
    expect((await run(runClusterCommand, 'add', 'hpc', '--slurm', 'local', '--partition', 'debug')).code).toBe(0);
  }, 120_000);

  afterAll(async () => {
    await stopDeployedJobs();
    await slurm?.stop();
    if (saved === undefined) delete process.env.SLURM_CONF;
    else process.env.SLURM_CONF = saved;
    delete process.env.SHOAL_DATA_DIR;
    env?.restore();
  }, 120_000);

  test('cluster add --slurm local and cluster test: sinfo per partition, and what blocks a job', async () => {
    const add = await run(runClusterCommand, 'add', 'timed', '--slurm', 'local', '--partition', 'debug', '--time', '00:30:00');
    expect(add.code, add.err).toBe(0);
    expect(add.out).toContain('Cluster timed: Slurm, from this machine as its login node (partition debug, time 00:30:00) saved.');
    const t = await run(runClusterCommand, 'test', 'timed');
    expect(t.code, t.out + t.err).toBe(0);
    expect(t.out).toMatch(/^ {2}debug\* +up +2 +idle +4 +4000 MB +\(null\) +infinite$/m);
    expect(t.out).toMatch(/^Ready: /m);

    expect((await run(runClusterCommand, 'add', 'wrong', '--slurm', 'local', '--partition', 'gpu')).code).toBe(0);
    const w = await run(runClusterCommand, 'test', 'wrong');
    expect(w.code).toBe(1);
    expect(w.out).toContain('✗ partition gpu does not exist (partitions: debug): give one of these with --partition');
    expect(w.out).toMatch(/✗ Slurm refuses a job with this cluster's settings: .*invalid partition/i);

    const bad = await run(runClusterCommand, 'add', 'bad', '--slurm', 'me@login:99999');
    expect(bad.code).toBe(1);
    expect(bad.err).toMatch(/99999/);
  });

  test('--slurm user@login-host: cluster test and a deploy that trains to the end, all through the SSH login host', async () => {
    const key = makeUserKey(join(env.home, 'keys'), 'login');
    // The login host's sessions share this test's home, as a cluster's nodes mount the login node's.
    const login = await startSshd({ address: '127.0.0.9', authorizedKeys: [key.publicKey], home: env.home });
    try {
      const where = `${login.user}@127.0.0.9:${login.port}`;
      const add = await run(runClusterCommand, 'add', 'remote', '--slurm', where, '--identity', key.path, '--partition', 'debug', '--env', `SLURM_CONF=${slurm.conf}`);
      expect(add.code, add.err).toBe(0);
      expect(add.out).toContain(`Cluster remote: Slurm, from login host ${where} (partition debug) saved.`);
      // An unknown login host key is refused unless trusted, as for any SSH host.
      const refused = await run(runClusterCommand, 'test', 'remote');
      expect(refused.code).not.toBe(0);
      expect(refused.out + refused.err).toMatch(/host key/i);
      const t = await run(runClusterCommand, 'test', 'remote', '--trust-new');
      expect(t.code, t.out + t.err).toBe(0);
      expect(t.out).toMatch(/^ {2}debug\* +up +2 +idle/m);
      expect(t.out).toMatch(/^Ready: /m);

      const d = await run(runDeployCommand, '--cluster', 'remote', '--model', 'mlp', '--plan', 'pp1-dp2', '--steps', '20', '--eval-every', '20', '--json');
      expect(d.code, d.err).toBe(0);
      expect(d.err).toContain('on login host 127.0.0.9');
      const deployed = jsonLines<{ type: string; jobId: string }>(d.out).find((e) => e.type === 'deployed')!;
      const events = jsonLines<JobEvent>(d.out);
      expect(events.filter((e) => e.type === 'step')).toHaveLength(20);
      expect(events.filter((e) => e.type === 'agent').map((e) => e.type === 'agent' && e.host).sort()).toEqual(['node1', 'node2']);
      expect(events.at(-1)?.type).toBe('final');
      const { record } = findDeployRecord(deployed.jobId);
      expect(record.slurm!.login?.address).toBe('127.0.0.9');
      for (let i = 0; i < 100 && squeue() !== ''; i++) await sleep(200);
      expect(squeue()).toBe('');
      // Found again through the login host: the record's allocation, asked of Slurm there.
      const jobs = JSON.parse((await run(runJobsCommand, '--json')).out) as JobSummary[];
      expect(jobs.find((j) => j.jobId === deployed.jobId)).toMatchObject({ state: 'finished', slurm: { allocation: record.slurm!.allocation, state: 'ended' } });
    } finally {
      await login.stop();
    }
  }, 300_000);

  test('deploy pp2-dp1 over node1 and node2 trains to the end; the allocation is given back; the checkpoint comes home', async () => {
    const d = await run(runDeployCommand, '--cluster', 'hpc', '--model', 'mlp', '--plan', 'pp2-dp1', '--epochs', '1', '--checkpoint-every', '50', '--json');
    expect(d.code, d.err).toBe(0);
    expect(d.err).toMatch(/slurm .*allocation \d+ (PENDING|running)/);
    expect(d.err).toMatch(/allocation \d+ on node1, node2/);
    const deployed = jsonLines<{ type: string; jobId: string; processes: Array<{ target: string; role: string }> }>(d.out).find((e) => e.type === 'deployed')!;
    expect(deployed.processes.filter((p) => p.role === 'agent').map((p) => p.target).sort()).toEqual(['node1', 'node2']);
    const events = jsonLines<JobEvent>(d.out);
    expect(events.filter((e) => e.type === 'step')).toHaveLength(125); // 1 epoch of 8,000 samples, 64 a step
    expect(events.filter((e) => e.type === 'agent').map((e) => e.type === 'agent' && e.host).sort()).toEqual(['node1', 'node2']);
    const final = events.at(-1);
    expect(final?.type === 'final' && final.validationAccuracy).toBeGreaterThanOrEqual(0.9);

    const { record, runDir } = findDeployRecord(deployed.jobId);
    expect(record.launcher).toBe('slurm');
    expect(record.slurm!.nodes.map((n) => n.alias)).toEqual(['node1', 'node2']);
    // The coordinator's end gives the allocation back.
    for (let i = 0; i < 100 && squeue() !== ''; i++) await sleep(200);
    expect(squeue()).toBe('');

    const jobs = JSON.parse((await run(runJobsCommand, '--json')).out) as JobSummary[];
    expect(jobs.find((j) => j.jobId === deployed.jobId)).toMatchObject({ state: 'finished', slurm: { allocation: record.slurm!.allocation, state: 'ended' } });
    const p = await run(runPullCommand, deployed.jobId);
    expect(p.code, p.err).toBe(0);
    expect(readdirSync(join(runDir, 'checkpoints'))).toContain('step-0000125.ckpt');
    expect(jobProcesses()).toEqual([]);
  }, 300_000);

  test("a user's Keras model with NumPy data goes once to the login node's home and trains on both nodes", async () => {
    await tf.setBackend('cpu');
    const modelFile = await saveLayersModel(twoInTwoOut(), join(env.home, 'model'));
    const dataDir = join(env.home, 'data-in');
    writeNpyData(dataDir, TWO_IN_TWO_OUT_ARRAYS, 80);
    writeNpyData(join(dataDir, 'val'), TWO_IN_TWO_OUT_ARRAYS, 16, 2);
    const d = await run(runDeployCommand, '--cluster', 'hpc', '--model', modelFile, '--data', dataDir, '--plan', 'pp2-dp1', '--batch', '16', '--steps', '6', '--json');
    expect(d.code, d.err).toBe(0);
    expect(d.err).toMatch(/upload\s+ok\s+model and data ~\/\.shoal\/inputs\/\w+ copied \(\d+\.\d MiB\); the nodes share it/);
    const [inputs] = readdirSync(join(env.home, '.shoal', 'inputs')).filter((f) => !f.startsWith('.'));
    for (const file of ['model/model.json', 'model/weights.bin', 'data/a.npy', 'data/cls.npy', 'data/val/reg.npy']) expect(existsSync(join(env.home, '.shoal', 'inputs', inputs, file)), file).toBe(true);
    const events = jsonLines<JobEvent>(d.out);
    expect(events.filter((e) => e.type === 'step')).toHaveLength(6);
    expect(events.filter((e) => e.type === 'agent').map((e) => e.type === 'agent' && e.host).sort()).toEqual(['node1', 'node2']);
    const final = events.at(-1);
    expect(final?.type === 'final' && final.validationLoss).toBeGreaterThan(0);
  }, 300_000);

  test('stop: scancel, then every process of the job gone', async () => {
    const d = await run(runDeployCommand, '--cluster', 'hpc', '--model', 'mlp', '--plan', 'pp1-dp2', '--steps', '100000', '--eval-every', '100000', '--detach', '--json');
    expect(d.code, d.err).toBe(0);
    const { jobId } = jsonLines<{ jobId: string }>(d.out)[0];
    const history = join(env.home, '.shoal', 'runs', jobId, 'events.jsonl');
    const steps = () => (existsSync(history) ? (readFileSync(history, 'utf8').match(/"type":"step"/g)?.length ?? 0) : 0);
    for (let i = 0; i < 600 && steps() < 5; i++) await sleep(100);
    expect(steps()).toBeGreaterThanOrEqual(5);
    expect(squeue()).toMatch(/RUNNING shoal$/m);
    const jobs = JSON.parse((await run(runJobsCommand, '--json')).out) as JobSummary[];
    expect(jobs.find((j) => j.jobId === jobId)).toMatchObject({ state: 'running', slurm: { state: 'RUNNING' } });
    expect((await run(runJobsCommand)).out).toMatch(new RegExp(`^${jobId}  running .* Slurm job \\d+ RUNNING; `, 'm'));

    const s = await run(runStopCommand, jobId, '--now');
    expect(s.code, s.err).toBe(0);
    expect(squeue()).toBe('');
    for (let i = 0; i < 100 && jobProcesses().length; i++) await sleep(100);
    expect(jobProcesses()).toEqual([]);
  }, 300_000);

  test('a node Slurm marks down mid-job is a lost agent: the job goes on with the survivor to the end', async () => {
    const d = await run(runDeployCommand, '--cluster', 'hpc', '--model', 'mlp', '--plan', 'pp1-dp2', '--steps', '150', '--eval-every', '150', '--detach', '--json');
    expect(d.code, d.err).toBe(0);
    const { jobId } = jsonLines<{ jobId: string }>(d.out)[0];
    const history = join(env.home, '.shoal', 'runs', jobId, 'events.jsonl');
    const steps = () => (existsSync(history) ? (readFileSync(history, 'utf8').match(/"type":"step"/g)?.length ?? 0) : 0);
    for (let i = 0; i < 600 && steps() < 10; i++) await sleep(100);
    expect(steps()).toBeGreaterThanOrEqual(10);
    slurm.cmd('scontrol', 'update', 'nodename=node2', 'state=down', 'reason=shoal-test');
    try {
      const a = await run(runAttachCommand, jobId, '--json');
      expect(a.code, a.err).toBe(0);
      const events = jsonLines<JobEvent>(a.out);
      expect(events.some((e) => e.type === 'membership' && (e.lost ?? 0) >= 1)).toBe(true);
      expect(events.at(-1)).toMatchObject({ type: 'final', steps: 150 });
    } finally {
      // ReturnToService=2 brings node2 back by itself once its slurmd answers; resume it if not yet.
      for (let i = 0; i < 150 && !/^node2 idle/m.test(slurm.cmd('sinfo', '-h', '-N', '-o', '%N %t')); i++) {
        if (i === 50) slurm.cmd('scontrol', 'update', 'nodename=node2', 'state=resume');
        await sleep(200);
      }
    }
    for (let i = 0; i < 100 && squeue() !== ''; i++) await sleep(200);
    expect(squeue()).toBe('');
    expect(jobProcesses()).toEqual([]);
  }, 300_000);

  test("before the allocation's time limit the job stops with a checkpoint", async () => {
    expect((await run(runClusterCommand, 'add', 'short', '--slurm', 'local', '--time', '00:01:00')).code).toBe(0);
    const d = await run(runDeployCommand, '--cluster', 'short', '--model', 'mlp', '--plan', 'pp1-dp2', '--steps', '100000', '--eval-every', '100000', '--json');
    const deployed = jsonLines<{ type: string; jobId: string }>(d.out).find((e) => e.type === 'deployed');
    expect(deployed, d.err).toBeDefined();
    const events = jsonLines<JobEvent>(d.out);
    expect(events.some((e) => e.type === 'log' && /allocation ends soon \(its time limit\): the job stops with a checkpoint/.test(e.message))).toBe(true);
    const steps = events.filter((e) => e.type === 'step').length;
    expect(steps).toBeGreaterThan(0);
    expect(readdirSync(join(env.home, '.shoal', 'runs', deployed!.jobId, 'checkpoints'))).toContain(`step-${String(steps).padStart(7, '0')}.ckpt`);
    // Stopped by the coordinator, not killed by Slurm at the limit.
    expect(events.some((e) => e.type === 'status' && e.state === 'failed')).toBe(false);
    for (let i = 0; i < 100 && squeue() !== ''; i++) await sleep(200);
    expect(squeue()).toBe('');
  }, 300_000);

  test('Ctrl-C while the allocation waits in the queue cancels the request', async () => {
    const blocker = slurm.cmd('sbatch', '--parsable', '-N2', '--exclusive', '-o', '/dev/null', '--wrap', 'exec sleep 600').trim();
    try {
      for (let i = 0; i < 100 && !squeue().includes(`${blocker} RUNNING`); i++) await sleep(100);
      const child = spawn(process.execPath, [cli, 'deploy', '--cluster', 'hpc', '--model', 'mlp', '--plan', 'pp1-dp2', '--steps', '10'], { env: { ...process.env }, stdio: ['ignore', 'pipe', 'pipe'] });
      let err = '';
      child.stderr.on('data', (b: Buffer) => (err += b.toString()));
      const exited = new Promise<number | null>((resolve) => child.once('exit', (code) => resolve(code)));
      for (let i = 0; i < 300 && !/PENDING \((Resources|Priority)\), waiting/.test(err); i++) await sleep(100);
      expect(err).toMatch(/PENDING \((Resources|Priority)\), waiting \d+:\d\d/);
      child.kill('SIGINT');
      expect(await exited, err).toBe(1);
      expect(err).toMatch(/Cancelled the Slurm allocation \d+ while it waited in the queue \(nothing was started\)/);
      expect(squeue()).toBe(`${blocker} RUNNING wrap`);
    } finally {
      slurm.cmd('scancel', blocker);
    }
  }, 120_000);
});
