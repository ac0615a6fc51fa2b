import { execFile, spawn } from 'node:child_process';
import { existsSync, mkdtempSync, rmSync, statSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { createInterface } from 'node:readline';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { zooModel } from '../../engine/model/zoo.js';
import { presetPlan } from '../../engine/plan/presets.js';
import { JobEventSchema, type JobEvent } from '../../engine/protocol/events.js';

const root = join(__dirname, '..', '..');
let data: string;
const env = () => ({ ...process.env, CI: 'true', SHOAL_DATA_DIR: data });

beforeAll(() => {
  data = mkdtempSync(join(tmpdir(), 'shoal-resize-'));
});
afterAll(() => rmSync(data, { recursive: true, force: true }));

function shoal(args: string[], extraEnv: Record<string, string> = {}): Promise<{ code: number; stdout: string; stderr: string }> {
  return new Promise((resolve) => {
    execFile('npx', ['shoal', ...args], { cwd: root, env: { ...env(), ...extraEnv }, timeout: 300_000 }, (err, stdout, stderr) => {
      const code = err ? (typeof err.code === 'number' ? err.code : 1) : 0;
      resolve({ code, stdout, stderr });
    });
  });
}

/** `shoal train --model mlp … --json` in the background, once it has taken its first step (or exited): its events as they come. */
async function trainRunning(args: string[]): Promise<{ events: JobEvent[]; exited: Promise<number | null>; stderr: () => string }> {
  const train = spawn('npx', ['shoal', 'train', '--model', 'mlp', ...args, '--json'], { cwd: root, env: env(), stdio: ['ignore', 'pipe', 'pipe'] });
  let stderr = '';
  train.stderr.on('data', (d: Buffer) => (stderr += d.toString()));
  const events: JobEvent[] = [];
  let firstStep!: () => void;
  const running = new Promise<void>((resolve) => (firstStep = resolve));
  createInterface({ input: train.stdout }).on('line', (line) => {
    const event = JobEventSchema.parse(JSON.parse(line));
    events.push(event);
    if (event.type === 'step') firstStep();
  });
  const exited = new Promise<number | null>((resolve) => train.once('exit', (code) => resolve(code)));
  await Promise.race([running, exited]);
  return { events, exited, stderr: () => stderr };
}

/**
 * `shoal resize` grows a job that `shoal train` runs in another process: it finds the job by
 * id, asks its coordinator over the control connection, starts agents detached from itself, and the
 * job goes on with them without a restart.
 */
describe('npx shoal resize', () => {
  it('adds two local agents to a running `shoal train` job; the job reports 4 agents and finishes', async () => {
    const planFile = join(data, 'plan.json');
    writeFileSync(planFile, JSON.stringify({ ...presetPlan(zooModel('mlp'), 'pp1-dp2'), virtualNodes: { total: 4 } }));
    const { events, exited, stderr } = await trainRunning(['--cluster', 'local:2', '--plan-file', planFile, '--steps', '400']);
    const jobId = /job (job-\S+), run folder (\S+)/.exec(stderr());
    expect(jobId, stderr()).not.toBeNull();
    const [, id, runDir] = jobId!;
    // The control file holds the secret: readable by its owner only.
    expect(statSync(join(runDir, 'control.json')).mode & 0o777).toBe(0o600);

    const badRank = await shoal(['resize', id, '--remove', '7']);
    expect(badRank.code).toBe(1);
    expect(badRank.stderr).toMatch(/has no rank 7; its ranks are 0, 1/);
    const sshHost = await shoal(['resize', id, '--add', 'gpu1']);
    expect(sshHost.code).toBe(1);
    expect(sshHost.stderr).toMatch(/--add gpu1: job .* was started with `shoal train`.*listens on 127\.0\.0\.1 only; add agents here with --add local\[:N\], or deploy/);

    const resize = await shoal(['resize', id, '--add', 'local:2', '--json']);
    expect(resize.code, resize.stderr).toBe(0);
    expect(resize.stderr).toMatch(/resize accepted \(add 2 agents\)/);
    expect(resize.stderr).not.toMatch(/[0-9a-f]{64}/); // never the secret
    const applied = JSON.parse(resize.stdout.trim());
    expect(applied.type).toBe('membership');
    expect(applied.agents).toHaveLength(4);

    expect(await exited, stderr()).toBe(0);
    const generations = events.flatMap((e) => (e.type === 'membership' && e.reason.startsWith('resize') ? [e] : []));
    expect(generations).toHaveLength(1);
    expect(generations[0].agents.map((a) => a.virtualNodes).reduce((a, b) => a + b)).toBe(4);
    expect(generations[0].agents).toHaveLength(4);
    expect(generations[0].agents.filter((a) => a.host.startsWith('local-a'))).toHaveLength(2);
    expect(events.filter((e) => e.type === 'step').map((e) => e.type === 'step' && e.step)).toEqual(Array.from({ length: 400 }, (_, i) => i));
    expect(events.at(-1)?.type).toBe('final');
    // Once the job has ended its control file is gone, and resize says the job is not running.
    expect(existsSync(join(runDir, 'control.json'))).toBe(false);
    const after = await shoal(['resize', id, '--add', 'local']);
    expect(after.code).toBe(1);
    expect(after.stderr).toMatch(/is not running: .*no control\.json.*shoal resume/);
  }, 600_000);

  it('an agent that cannot set up as it joins (its data unreadable) is left out: the job goes on and finishes, the resize fails saying why', async () => {
    const steps = 300;
    const { events, exited, stderr } = await trainRunning(['--cluster', 'local:2', '--steps', String(steps)]);
    const id = /job (job-\S+), run folder/.exec(stderr())?.[1];
    expect(id, stderr()).toBeDefined();

    // The new agent is started with the resize's environment: here it cannot find the digits it trains on.
    const resize = await shoal(['resize', id!, '--add', 'local:1'], { SHOAL_MNIST_DIR: '/nonexistent' });
    expect(resize.code).toBe(1);
    // Its requester hears why: the agent's exit, seen at once, waits 2 s for that answer; a process starved
    // for longer than that (a loaded machine) reports the exit, naming the agent's log, which is right too.
    expect(resize.stderr).toMatch(/refused the resize: Agent rank 2 on local-a0 \(pid \d+\) failed: Cannot read MNIST digits from \/nonexistent\/0\.json|Agent local-a0 \(pid \d+\) exited with code 1 before the resize was applied; see /);

    expect(await exited, stderr()).toBe(0);
    const why = events.find((e) => e.type === 'log' && e.level === 'warn' && e.message.includes('Cannot read MNIST digits from /nonexistent/0.json'));
    expect(why?.type === 'log' && why.message).toMatch(/Setting up again without it\.$/);
    const resized = events.flatMap((e) => (e.type === 'membership' && e.reason.startsWith('resize') ? [e] : []));
    expect(resized).toHaveLength(1);
    expect(resized[0].agents.map((a) => a.host).sort()).toEqual(['local-0', 'local-1']);
    expect(resized[0].lost).toBe(1);
    expect(events.filter((e) => e.type === 'step').map((e) => e.type === 'step' && e.step)).toEqual(Array.from({ length: steps }, (_, i) => i));
    expect(events.at(-1)?.type).toBe('final');
  }, 600_000);

  it('says which job it could not find, and refuses bad arguments and SSH hosts clearly', async () => {
    const unknown = await shoal(['resize', 'job-nope', '--add', 'local:2']);
    expect(unknown.code).toBe(1);
    expect(unknown.stderr).toMatch(/No job "job-nope": no run folder with a job\.json at .*runs\/job-nope/);
    const host = await shoal(['resize', 'job-nope', '--add', 'gpu1:0']);
    expect(host.stderr).toMatch(/--add gpu1:0: the number of agents must be 1 to 64/);
    const ranks = await shoal(['resize', 'job-nope', '--remove', '1,x']);
    expect(ranks.stderr).toMatch(/--remove 1,x: expected ranks as non-negative whole numbers/);
    const nothing = await shoal(['resize', 'job-nope']);
    expect(nothing.stderr).toMatch(/Nothing to do\. Usage: shoal resize/);
  }, 120_000);
});
