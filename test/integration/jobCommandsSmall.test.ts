import { spawn } from 'node:child_process';
import { existsSync, mkdirSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterAll, beforeAll, expect, test } from 'vitest';
import type { JobEvent } from '../../engine/protocol/events.js';
import { runAttachCommand } from '../../engine/node/commands/attach.js';
import { runDeployCommand } from '../../engine/node/commands/deploy.js';
import { runJobsCommand, type JobSummary } from '../../engine/node/commands/jobs.js';
import { runStopCommand } from '../../engine/node/commands/stop.js';
import { DEPLOY_RECORD_VERSION, writeDeployRecord } from '../../engine/node/jobs/deployRecord.js';
import { runsRoot } from '../../engine/node/jobs/runStore.js';
import { freePort } from '../support/sshd.js';
import { useTempHome } from '../support/homes.js';
import { runCommand as run, jsonLines, stopDeployedJobs } from '../support/commandRun.js';

/**
 * Smaller points of a detached job on this machine: attach --no-follow prints the history
 * so far and exits while the job runs; Ctrl-C on a following CLI says how to re-attach; stop --now
 * stops without a checkpoint; `jobs` says a host's failure once, not once per job.
 */

let env: ReturnType<typeof useTempHome>;
const cli = join(__dirname, '..', '..', 'dist', 'cli.cjs');

beforeAll(() => {
  env = useTempHome();
  process.env.SHOAL_DATA_DIR = join(env.home, 'data');
});

afterAll(async () => {
  await stopDeployedJobs();
  delete process.env.SHOAL_DATA_DIR;
  env?.restore();
});

const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));
const stateOf = async (id: string) => (JSON.parse((await run(runJobsCommand, '--json')).out) as JobSummary[]).find((j) => j.jobId === id)?.state;

test('a running job: attach --no-follow prints the history so far and exits; Ctrl-C on a following attach says how to re-attach; stop --now stops at once', async () => {
  const d = await run(runDeployCommand, '--cluster', 'local', '--model', 'mlp', '--plan', 'pp1-dp1', '--steps', '1000000', '--eval-every', '1000000', '--detach', '--json');
  expect(d.code, d.err).toBe(0);
  const { jobId: id } = jsonLines<{ jobId: string }>(d.out)[0];
  const history = join(env.home, '.shoal', 'runs', id, 'events.jsonl');
  const steps = () => (existsSync(history) ? readFileSync(history, 'utf8').match(/"type":"step"/g)?.length ?? 0 : 0);
  for (let i = 0; i < 1200 && steps() < 20; i++) await sleep(100);

  // It used to stream until the events paused for 300 ms, which a training job never does.
  const seen = await run(runAttachCommand, id, '--json', '--no-follow');
  expect(seen.code, seen.err).toBe(0);
  expect(seen.err).toMatch(/\(live\); still running/);
  const events = jsonLines<JobEvent>(seen.out);
  expect(events.filter((e) => e.type === 'step').length).toBeGreaterThanOrEqual(20);
  expect(events.length).toBeLessThanOrEqual(readFileSync(history, 'utf8').trim().split('\n').length);
  expect(await stateOf(id)).toBe('running');

  const child = spawn(process.execPath, [cli, 'attach', id], { env: { ...process.env }, stdio: ['ignore', 'pipe', 'pipe'] });
  let out = '';
  let err = '';
  child.stdout.on('data', (b: Buffer) => (out += b.toString()));
  child.stderr.on('data', (b: Buffer) => (err += b.toString()));
  const exited = new Promise<number | null>((resolve) => child.once('exit', (code) => resolve(code)));
  for (let i = 0; i < 1200 && !/^step \d+/m.test(out); i++) await sleep(100);
  child.kill('SIGINT');
  expect(await exited, err).toBe(130);
  expect(err).toContain(`detached from job ${id}; it keeps running. Re-attach with \`shoal attach ${id}\``);
  expect(await stateOf(id)).toBe('running');

  const s = await run(runStopCommand, id, '--now');
  expect(s.code, s.err).toBe(0);
  expect(s.err).not.toContain('asking the coordinator');
  expect(s.err).not.toMatch(/checkpoint .* written/);
  expect(s.out).toContain(`job ${id} stopped on 1 host`);
  expect(await stateOf(id)).toBe('stopped');
}, 300_000);

test('jobs says an unreachable host\'s message once, not once per job on it', async () => {
  const port = await freePort('127.0.0.2');
  const host = { alias: 'gone', address: '127.0.0.2', port, user: 'nobody', identityFiles: [], useAgent: false, jump: [] };
  for (const id of ['job-gone-1', 'job-gone-2']) {
    const runDir = join(runsRoot(), id);
    mkdirSync(runDir, { recursive: true });
    writeDeployRecord(runDir, { version: DEPLOY_RECORD_VERSION, jobId: id, createdAt: new Date().toISOString(), launcher: 'ssh', cluster: 'lost', hosts: [host], head: 'gone', model: 'mlp', steps: 10, coordinator: { listenHost: '127.0.0.1', port: 1, pid: 1 }, processes: [] });
  }
  const j = await run(runJobsCommand);
  expect(j.code).toBe(0);
  expect((j.out + j.err).match(/connection refused/g)).toHaveLength(1);
  expect(j.err).toMatch(new RegExp(`^gone: .*Cannot reach 127\\.0\\.0\\.2:${port}: connection refused`, 'm'));
  for (const id of ['job-gone-1', 'job-gone-2']) expect(j.out).toMatch(new RegExp(`^${id}  unknown .*head host gone unreachable`, 'm'));
});
