import { existsSync, readdirSync, readFileSync, rmSync, statSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, test } from 'vitest';
import type { JobEvent } from '../../engine/protocol/events.js';
import { runAttachCommand } from '../../engine/node/commands/attach.js';
import { runDeployCommand } from '../../engine/node/commands/deploy.js';
import { runJobsCommand, type JobSummary } from '../../engine/node/commands/jobs.js';
import { runResizeCommand } from '../../engine/node/commands/resize.js';
import { runStopCommand } from '../../engine/node/commands/stop.js';
import { zooModel } from '../../engine/model/zoo.js';
import { presetPlan } from '../../engine/plan/presets.js';
import type { StartedProcess } from '../../engine/node/deploy/launcher.js';
import { saveClusterHosts } from '../../engine/node/hosts/clusterStore.js';
import type { SshHost } from '../../engine/node/hosts/host.js';
import { listDeployRecords } from '../../engine/node/jobs/deployRecord.js';
import { MACHINES } from '../support/gpuStandIns.js';
import { freePort, makeUserKey, startSshd, type PrivateSshd, type UserKey, hostFor, standInBin, startHostsWithHomes } from '../support/sshd.js';
import { hostHome, useTempHome } from '../support/homes.js';
import { runCommand as run, jsonLines, endDeployTests } from '../support/commandRun.js';

/**
 * `shoal deploy|jobs|attach|stop` against three real OpenSSH servers on 127.0.0.2–4, each with its own
 * host key and its own $HOME (so each "host" has its own ~/.shoal). Host-key, wrong-key and jump-host
 * cases live in sshHostKeys, sshConnect and sshJumpAndMany; this file is about jobs.
 */

let env: ReturnType<typeof useTempHome>;
let key: UserKey;
let servers: PrivateSshd[];
let homes: string[];
const aliases = ['h2', 'h3', 'h4'];

beforeAll(async () => {
  env = useTempHome();
  process.env.SHOAL_DATA_DIR = join(env.home, 'data');
  key = makeUserKey(join(env.home, 'keys'), 'id_deploy');
  ({ servers, homes } = await startHostsWithHomes(aliases, [key.publicKey]));
  saveClusterHosts('lab', servers.map((s, i) => hostOf(s, aliases[i])));
});

afterAll(() => endDeployTests(homes, env));

const hostOf = (s: { address: string; port: number; user: string }, alias: string): SshHost => hostFor(s, alias, key.path);

/** Any live process in the process group `pgid` (a job's process and what it started share one). */
function groupAlive(pgid: number): boolean {
  for (const pid of readdirSync('/proc').filter((p) => /^\d+$/.test(p))) {
    try {
      const stat = readFileSync(`/proc/${pid}/stat`, 'utf8');
      const [state, , pgrp] = stat.slice(stat.lastIndexOf(')') + 2).split(' ');
      if (Number(pgrp) === pgid && state !== 'Z') return true;
    } catch {
      // exited meanwhile
    }
  }
  return false;
}

/** Processes whose parent is `pid`. */
function childrenOf(pid: number): number[] {
  return readdirSync('/proc')
    .filter((p) => /^\d+$/.test(p))
    .filter((p) => {
      try {
        const stat = readFileSync(`/proc/${p}/stat`, 'utf8');
        return Number(stat.slice(stat.lastIndexOf(')') + 2).split(' ')[1]) === pid;
      } catch {
        return false;
      }
    })
    .map(Number);
}

/** Poll `shoal jobs` until the job reaches `state` (bounded by attempts, not by time). */
async function untilState(id: string, state: JobSummary['state']): Promise<void> {
  for (let i = 0; i < 200; i++) {
    const jobs = JSON.parse((await run(runJobsCommand, '--json')).out) as JobSummary[];
    if (jobs.find((j) => j.jobId === id)?.state === state) return;
    await new Promise((r) => setTimeout(r, 100));
  }
  throw new Error(`job ${id} never became ${state}`);
}

describe('shoal deploy over SSH', () => {
  let jobId: string;

  test('pp2 × dp2 on three hosts: detached processes, the secret only in a mode-600 file, attach back-fills, MNIST ≥ 90 %', async () => {
    const d = await run(runDeployCommand, '--cluster', 'lab', '--model', 'mlp', '--plan', 'pp2-dp2', '--steps', '150', '--eval-every', '150', '--trust-new', '--detach', '--json');
    expect(d.err).not.toContain('shoal deploy:');
    expect(d.code).toBe(0);
    const deployed = jsonLines<{ type: string; jobId: string; processes: StartedProcess[] }>(d.out).find((e) => e.type === 'deployed')!;
    jobId = deployed.jobId;
    for (const a of aliases) expect(d.err).toMatch(new RegExp(`^${a}\\s+upload\\s+ok\\s+uploaded to ~/\\.shoal/agent/`, 'm'));
    // Round-robin from the head: h2 holds the coordinator and two agents, h3 and h4 one agent each.
    expect(deployed.processes.map((p) => `${p.target}:${p.name}`)).toEqual(['h2:coordinator', 'h2:agent-0', 'h3:agent-1', 'h4:agent-2', 'h2:agent-3']);

    const config = join(homes[0], '.shoal', 'jobs', jobId, 'h2', 'coordinator.config');
    expect(statSync(config).mode & 0o777).toBe(0o600);
    const secret = (JSON.parse(readFileSync(config, 'utf8')) as { secret: string }).secret;
    expect(secret).toMatch(/^[0-9a-f]{64}$/);
    // No process on this machine has the secret on its command line or in its environment.
    for (const pid of readdirSync('/proc').filter((p) => /^\d+$/.test(p))) {
      for (const file of ['cmdline', 'environ']) {
        let text = '';
        try {
          text = readFileSync(`/proc/${pid}/${file}`, 'latin1');
        } catch {
          continue; // exited meanwhile, or not ours
        }
        expect(text.includes(secret), `/proc/${pid}/${file}`).toBe(false);
      }
    }
    for (const p of deployed.processes) expect(groupAlive(p.pid), `${p.name} on ${p.target}`).toBe(true);

    // The deploying command is gone (its SSH sessions closed); attaching replays the whole history.
    const a = await run(runAttachCommand, jobId, '--json');
    expect(a.err).toContain('(live)');
    expect(a.code).toBe(0);
    const events = jsonLines<JobEvent>(a.out);
    expect(events.filter((e) => e.type === 'step').map((e) => (e as { step: number }).step)).toEqual(Array.from({ length: 150 }, (_, i) => i));
    expect(new Set(events.filter((e) => e.type === 'agent').map((e) => (e as { host: string }).host))).toEqual(new Set(aliases));
    const final = events.find((e) => e.type === 'final') as Extract<JobEvent, { type: 'final' }>;
    expect(final.validationAccuracy).toBeGreaterThanOrEqual(0.9);
    // Every line of the coordinator's log names its host (and rank, for agents' lines).
    const coordinatorLog = readFileSync(join(homes[0], '.shoal', 'runs', jobId, 'coordinator.log'), 'utf8').trim().split('\n');
    for (const line of coordinatorLog) expect(line).toMatch(/^\[(coordinator|h[234])( rank \d+)?\] /);

    // Once the coordinator has exited, the history comes from the file it kept on the head host.
    await untilState(jobId, 'finished');
    const again = await run(runAttachCommand, jobId, '--json');
    expect(again.err).toContain('from the history on the head host');
    expect(jsonLines<JobEvent>(again.out)).toEqual(events);
    // The finished job left no secret behind.
    expect(existsSync(config)).toBe(false);
  });

  test('a second deploy of the same build uploads nothing; jobs lists it running; stop ends it on every host', async () => {
    const d = await run(runDeployCommand, '--cluster', 'lab', '--model', 'mlp', '--plan', 'pp2-dp2', '--steps', '100000', '--detach', '--json');
    expect(d.code).toBe(0);
    for (const a of aliases) expect(d.err).toMatch(new RegExp(`^${a}\\s+upload\\s+skip\\s+~/\\.shoal/agent/\\S+ already there`, 'm'));
    const { jobId: id, processes } = jsonLines<{ type: string; jobId: string; processes: StartedProcess[] }>(d.out).find((e) => e.type === 'deployed')!;

    const listed = JSON.parse((await run(runJobsCommand, '--json')).out) as JobSummary[];
    expect(listed.find((j) => j.jobId === id)?.state).toBe('running');
    expect(listed.find((j) => j.jobId === jobId)?.state).toBe('finished');

    const s = await run(runStopCommand, id);
    // A graceful stop: the coordinator saves a checkpoint and ends the job, then every host is cleaned up.
    for (const a of aliases) expect(s.err).toContain(`${a}: stopped, temporary files removed\n`);
    expect(s.err).toMatch(/checkpoint checkpoints\/step-\d+\.ckpt written on h2/);
    expect(s.code).toBe(0);
    for (const p of processes) expect(groupAlive(p.pid), `${p.name} on ${p.target}`).toBe(false);
    for (const h of homes) {
      expect(existsSync(join(h, '.shoal', 'jobs', id))).toBe(false);
      expect(existsSync(join(h, '.shoal', 'runs', id))).toBe(true);
    }
    const after = JSON.parse((await run(runJobsCommand, '--json')).out) as JobSummary[];
    expect(after.find((j) => j.jobId === id)?.state).toBe('stopped');
    const history = jsonLines<JobEvent>((await run(runAttachCommand, id, '--json', '--no-follow')).out);
    expect(history.at(-1)).toMatchObject({ type: 'status', state: 'stopped' });
  });

  test('resize a deployed job: --add a host of another stored cluster, then --remove its rank; stop ends its agent too', async () => {
    saveClusterHosts('pair', servers.slice(0, 2).map((s, i) => hostOf(s, aliases[i])));
    saveClusterHosts('spare', [hostOf(servers[2], 'h4')]);
    const planFile = join(env.home, 'dp2-v4.json');
    writeFileSync(planFile, JSON.stringify({ ...presetPlan(zooModel('mlp'), 'pp1-dp2'), virtualNodes: { total: 4 } }));
    const d = await run(runDeployCommand, '--cluster', 'pair', '--model', 'mlp', '--plan-file', planFile, '--steps', '100000', '--trust-new', '--detach', '--json');
    expect(d.code, d.err).toBe(0);
    const { jobId: id } = jsonLines<{ type: string; jobId: string }>(d.out).find((e) => e.type === 'deployed')!;
    await untilState(id, 'running');

    const grow = await run(runResizeCommand, id, '--add', 'h4', '--trust-new', '--json');
    expect(grow.err).not.toContain('shoal resize:');
    expect(grow.code).toBe(0);
    expect(grow.err).toMatch(/resize accepted/);
    expect(grow.err).toMatch(/^started agent-2 on h4 \(pid \d+\)$/m);
    const grown = JSON.parse(grow.out.trim()) as Extract<JobEvent, { type: 'membership' }>;
    expect(grown.reason).toBe('resize: +1');
    expect(grown.agents.map((a) => a.host).sort()).toEqual(['h2', 'h3', 'h4']);
    // V = 4 virtual nodes over three replicas: the global batch is unchanged.
    expect(grown.agents.map((a) => a.virtualNodes).reduce((a, b) => a + b)).toBe(4);
    const record = listDeployRecords().find((r) => r.record.jobId === id)!.record;
    expect(record.hosts.map((h) => h.alias)).toEqual(['h2', 'h3', 'h4']);
    expect(record.processes.map((p) => `${p.target}:${p.name}`)).toContain('h4:agent-2');

    // The coordinator dies after the resize: restarted, it waits for the three agents the job had, h4's too.
    const history = join(homes[0], '.shoal', 'runs', id, 'events.jsonl');
    const leader = record.processes.find((p) => p.name === 'coordinator')!.pid;
    const node = childrenOf(leader).find((pid) => readFileSync(`/proc/${pid}/cmdline`, 'latin1').includes('coordinator'));
    expect(node, 'the coordinator runs as a child of its supervisor').toBeDefined();
    process.kill(node!, 'SIGKILL');
    const regrown = () => {
      const text = readFileSync(history, 'utf8');
      const after = text.indexOf('restarted after a crash');
      if (after < 0) return undefined;
      return jsonLines<JobEvent>(text.slice(text.indexOf('\n', after) + 1)).find((e) => e.type === 'membership') as Extract<JobEvent, { type: 'membership' }> | undefined;
    };
    for (let i = 0; i < 900 && !regrown(); i++) await new Promise((r) => setTimeout(r, 100));
    expect(readFileSync(history, 'utf8')).toMatch(/restarted after a crash \(restart 1\); it continues from .* once 3 agents have rejoined/);
    const afterRestart = regrown()!;
    expect(afterRestart.agents.map((a) => a.host).sort()).toEqual(['h2', 'h3', 'h4']);
    expect(afterRestart.agents.map((a) => a.virtualNodes).reduce((a, b) => a + b)).toBe(4);

    const h4Rank = afterRestart.agents.find((a) => a.host === 'h4')!.rank;
    const shrink = await run(runResizeCommand, id, '--remove', String(h4Rank), '--json');
    expect(shrink.code, shrink.err).toBe(0);
    const shrunk = JSON.parse(shrink.out.trim()) as Extract<JobEvent, { type: 'membership' }>;
    expect(shrunk.agents.map((a) => a.host).sort()).toEqual(['h2', 'h3']);

    const unknownHost = await run(runResizeCommand, id, '--add', 'nowhere');
    expect(unknownHost.code).toBe(1);
    expect(unknownHost.err).toMatch(/No host "nowhere": it is not one of job .*'s hosts \(h2, h3, h4\) nor in a stored cluster/);

    const s = await run(runStopCommand, id);
    expect(s.code).toBe(0);
    expect(s.err).toContain('h4: stopped, temporary files removed');
    for (const p of listDeployRecords().find((r) => r.record.jobId === id)!.record.processes) expect(groupAlive(p.pid), `${p.name} on ${p.target}`).toBe(false);
  });

  test('SIGKILL of a deployed coordinator: its supervisor restarts it from the newest checkpoint, agents rejoin, attach follows to the end', async () => {
    const d = await run(runDeployCommand, '--cluster', 'lab', '--model', 'mlp', '--plan', 'pp1-dp2', '--steps', '480', '--checkpoint-every', '40', '--eval-every', '480', '--trust-new', '--detach', '--json');
    expect(d.code, d.err).toBe(0);
    const { jobId: id, processes } = jsonLines<{ type: string; jobId: string; processes: StartedProcess[] }>(d.out).find((e) => e.type === 'deployed')!;
    const history = join(homes[0], '.shoal', 'runs', id, 'events.jsonl');
    const following = run(runAttachCommand, id, '--json');
    // Once a checkpoint exists and training is past it, kill the coordinator's node process (not its supervisor).
    for (let i = 0; i < 600 && !/"action":"saved","step":40/.test(existsSync(history) ? readFileSync(history, 'utf8') : ''); i++) await new Promise((r) => setTimeout(r, 100));
    const leader = processes.find((p) => p.name === 'coordinator')!.pid;
    const node = childrenOf(leader).find((pid) => readFileSync(`/proc/${pid}/cmdline`, 'latin1').includes('coordinator'));
    expect(node, 'the coordinator runs as a child of its supervisor').toBeDefined();
    process.kill(node!, 'SIGKILL');

    // A studio that attaches to the restarted coordinator gets the job's whole history, the steps before the crash too.
    const restartedAndStepping = (text: string) => /restarted after a crash/.test(text) && /"type":"step"/.test(text.slice(text.indexOf('restarted after a crash')));
    for (let i = 0; i < 600 && !restartedAndStepping(readFileSync(history, 'utf8')); i++) await new Promise((r) => setTimeout(r, 100));
    const late = await run(runAttachCommand, id, '--json', '--no-follow');
    expect(late.err).toContain('(live)');
    const lateEvents = jsonLines<JobEvent>(late.out);
    expect(lateEvents.some((e) => e.type === 'step' && e.step === 0)).toBe(true);
    expect(lateEvents.some((e) => e.type === 'log' && /restarted after a crash/.test(e.message))).toBe(true);

    const a = await following;
    expect(a.code, a.err).toBe(0);
    const events = jsonLines<JobEvent>(a.out);
    const logsOf = events.flatMap((e) => (e.type === 'log' ? [e.message] : []));
    expect(logsOf.some((m) => /restarted after a crash \(restart 1\); it continues from checkpoints\/step-\d+\.ckpt once 2 agents have rejoined/.test(m))).toBe(true);
    const restored = events.find((e) => e.type === 'checkpoint' && e.action === 'restored') as Extract<JobEvent, { type: 'checkpoint' }>;
    expect(restored.step).toBeGreaterThanOrEqual(40);
    const steps = new Set(events.flatMap((e) => (e.type === 'step' ? [e.step] : [])));
    expect(steps.size).toBe(480);
    expect((events.find((e) => e.type === 'final') as Extract<JobEvent, { type: 'final' }>).validationAccuracy).toBeGreaterThan(0.85);
    const coordinatorLog = readFileSync(join(homes[0], '.shoal', 'runs', id, 'coordinator.log'), 'utf8');
    expect(coordinatorLog).toMatch(/^\[coordinator\] exited with code 137; starting it again \(1 of 3\)$/m);
    await untilState(id, 'finished');
  });

  test('one host down: the others are prepared, the down host is reported for itself, no job starts', async () => {
    const downPort = await freePort('127.0.0.4');
    const file = join(env.home, 'partly-down.json');
    writeFileSync(file, JSON.stringify({ name: 'partly-down', hosts: [hostOf(servers[0], 'h2'), hostOf({ ...servers[2], port: downPort }, 'down'), hostOf(servers[1], 'h3')] }));
    const before = listDeployRecords().length;
    const d = await run(runDeployCommand, '--cluster', file, '--model', 'mlp', '--plan', 'pp2-dp2', '--steps', '10', '--detach');
    expect(d.code).toBe(1);
    expect(d.err).toMatch(/^h2\s+ready\s+ok/m);
    expect(d.err).toMatch(/^h3\s+ready\s+ok/m);
    expect(d.err).toContain(`1 of 3 hosts are not ready`);
    expect(d.err).toContain(`✗ down (${servers[2].user}@127.0.0.4:${downPort}), connect: Cannot reach 127.0.0.4:${downPort}: connection refused.`);
    expect(listDeployRecords()).toHaveLength(before);
  });
});

describe('GPU hosts', () => {
  test('nvidia-smi found: the native backend is installed once, and an unreachable registry is a clear error for that host', async () => {
    // A stand-in for nvidia-smi (no GPU here) and a real npm whose registry cannot be reached.
    const home = hostHome('gpu');
    const bin = standInBin(join(home, 'stand-ins'), { machine: MACHINES.rtx4090AndT4 });
    writeFileSync(join(home, '.npmrc'), 'registry=http://127.0.0.1:9/\nfetch-retries=0\nfetch-timeout=5000\n');
    const gpu = await startSshd({ address: '127.0.0.5', authorizedKeys: [key.publicKey], home, pathPrefix: [bin] });
    const { SshLauncher } = await import('../../engine/node/deploy/sshLauncher.js');
    const events: string[] = [];
    const launcher = new SshLauncher([hostOf(gpu, 'gpu')], { trustRequest: () => true });
    const [result] = await launcher.prepare((e) => events.push(`${e.step} ${e.status} ${e.detail}`));
    launcher.close();
    expect(result.ok).toBe(false);
    expect(result.error).toContain('gpu (');
    expect(result.error).toContain('gpu-runtime: gpu (');
    expect(result.error).toMatch(/cannot reach http:\/\/127\.0\.0\.1:9 \(ECONNREFUSED\) to install @tensorflow\/tfjs-node-gpu/);
    expect(result.error).toContain('--no-gpu');
    expect(events).toContain('gpu-runtime running 0: NVIDIA GeForce RTX 4090, 1: NVIDIA GeForce RTX 4090, 2: NVIDIA GeForce RTX 4090, 3: NVIDIA GeForce RTX 4090, 4: Tesla T4, 5: Tesla T4');
    expect(events.some((e) => e.startsWith('gpu-runtime progress installing @tensorflow/tfjs-node-gpu@4.22.0'))).toBe(true);

    const cpuOnly = new SshLauncher([hostOf(gpu, 'gpu')], { noGpu: true });
    const [fallback] = await cpuOnly.prepare((e) => events.push(`${e.step} ${e.status} ${e.detail}`));
    cpuOnly.close();
    expect(fallback.ok).toBe(true);
    expect(events).toContain('gpu-runtime skipped 6 GPU(s), but --no-gpu: agents use the CPU');
    for (const dir of [bin, home]) rmSync(dir, { recursive: true, force: true });
  });
});
