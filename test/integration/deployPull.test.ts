import { existsSync, readdirSync, readFileSync, rmSync, statSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterAll, beforeAll, expect, test } from 'vitest';
import type { JobEvent } from '../../engine/protocol/events.js';
import { runAttachCommand } from '../../engine/node/commands/attach.js';
import { runDeployCommand } from '../../engine/node/commands/deploy.js';
import { runExportCommand } from '../../engine/node/commands/export.js';
import { runJobsCommand, type JobSummary } from '../../engine/node/commands/jobs.js';
import { runPullCommand } from '../../engine/node/commands/pull.js';
import { runStopCommand } from '../../engine/node/commands/stop.js';
import { saveClusterHosts } from '../../engine/node/hosts/clusterStore.js';
import { listDeployRecords } from '../../engine/node/jobs/deployRecord.js';
import { makeUserKey, type PrivateSshd, hostFor, startHostsWithHomes } from '../support/sshd.js';
import { useTempHome } from '../support/homes.js';
import { runCommand as run, jsonLines, endDeployTests } from '../support/commandRun.js';

/**
 * Results come home: `shoal stop` checkpoints first, `shoal pull` copies a deployed run's
 * folder from every host (again: only what changed; a cut copy continues), `shoal export` of a deployed
 * job fetches its checkpoint from the head host; a finished job stays finished when stopped.
 * Two real OpenSSH servers (127.0.0.2–3), each with its own $HOME.
 */

let env: ReturnType<typeof useTempHome>;
let servers: PrivateSshd[];
let homes: string[];
const aliases = ['h2', 'h3'];

beforeAll(async () => {
  env = useTempHome();
  process.env.SHOAL_DATA_DIR = join(env.home, 'data');
  const key = makeUserKey(join(env.home, 'keys'), 'id_pull');
  ({ servers, homes } = await startHostsWithHomes(aliases, [key.publicKey]));
  saveClusterHosts('lab', servers.map((s, i) => hostFor(s, aliases[i], key.path)));
});

afterAll(() => endDeployTests(homes, env));

const headRun = (id: string) => join(homes[0], '.shoal', 'runs', id);
const localRun = (id: string) => listDeployRecords().find((r) => r.record.jobId === id)!.runDir;
const stateOf = async (id: string) => (JSON.parse((await run(runJobsCommand, '--json')).out) as JobSummary[]).find((j) => j.jobId === id)?.state;
const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

async function deploy(...extra: string[]): Promise<string> {
  const d = await run(runDeployCommand, '--cluster', 'lab', '--model', 'mlp', '--plan', 'pp1-dp2', '--eval-every', '1000', '--trust-new', '--detach', '--json', ...extra);
  expect(d.code, d.err).toBe(0);
  return jsonLines<{ type: string; jobId: string }>(d.out).find((e) => e.type === 'deployed')!.jobId;
}

test('stop saves a checkpoint first (no --checkpoint-every); export fetches it from the head; pull brings every host\'s files and is idempotent and resumable', async () => {
  const id = await deploy('--steps', '100000');
  const history = join(headRun(id), 'events.jsonl');
  for (let i = 0; i < 900 && !/"type":"step"/.test(existsSync(history) ? readFileSync(history, 'utf8') : ''); i++) await sleep(100);

  const s = await run(runStopCommand, id);
  expect(s.code, s.err).toBe(0);
  expect(s.err).toMatch(/asking the coordinator on h2 to save a checkpoint and stop/);
  const written = /checkpoint (checkpoints\/step-\d+\.ckpt) written on h2: shoal pull/.exec(s.err)?.[1];
  expect(written, s.err).toBeDefined();
  expect(existsSync(join(headRun(id), written!))).toBe(true);
  expect(await stateOf(id)).toBe('stopped');
  const events = jsonLines<JobEvent>((await run(runAttachCommand, id, '--json', '--no-follow')).out);
  expect(events.filter((e) => e.type === 'status' && e.state === 'stopped')).toHaveLength(1);

  // The checkpoint is on h2 only; export copies it home first.
  expect(existsSync(join(localRun(id), written!))).toBe(false);
  const out = join(env.home, 'exported');
  const e = await run(runExportCommand, id, '--out', out);
  expect(e.err).not.toContain('shoal export:');
  expect(e.code).toBe(0);
  expect(e.err).toContain(`copied the newest checkpoint of job ${id} from h2`);
  expect(existsSync(join(out, 'model.json'))).toBe(true);
  // Buffer.equals: a deep toEqual of megabytes takes minutes.
  expect(readFileSync(join(localRun(id), written!)).equals(readFileSync(join(headRun(id), written!)))).toBe(true);

  const p = await run(runPullCommand, id);
  expect(p.code, p.err).toBe(0);
  const runDir = localRun(id);
  expect(readFileSync(join(runDir, 'events.jsonl'), 'utf8')).toBe(readFileSync(history, 'utf8'));
  expect(readFileSync(join(runDir, 'coordinator.log'), 'utf8')).toBe(readFileSync(join(headRun(id), 'coordinator.log'), 'utf8'));
  // h3's agent log, under hosts/h3; the local job record is never replaced.
  const h3Logs = readdirSync(join(homes[1], '.shoal', 'runs', id)).filter((f) => f.endsWith('.log'));
  expect(h3Logs.length).toBeGreaterThan(0);
  for (const f of h3Logs) expect(readFileSync(join(runDir, 'hosts', 'h3', f), 'utf8')).toBe(readFileSync(join(homes[1], '.shoal', 'runs', id, f), 'utf8'));
  expect(JSON.parse(readFileSync(join(runDir, 'deploy.json'), 'utf8')).jobId).toBe(id);
  expect(p.out).toMatch(new RegExp(`^job ${id}: \\d+ files copied \\(\\d+\\.\\d MiB\\), 1 already here, from 2 hosts into `));

  // Again: nothing changed, nothing copied.
  const again = await run(runPullCommand, id);
  expect(again.code).toBe(0);
  expect(again.out).toMatch(new RegExp(`^job ${id}: 0 files copied \\(0\\.0 MiB\\), \\d+ already here`));

  // A copy cut short continues from its .part file.
  const log = join(runDir, 'coordinator.log');
  const whole = readFileSync(log);
  rmSync(log);
  writeFileSync(log + '.part', whole.subarray(0, Math.floor(whole.length / 2)));
  const resumed = await run(runPullCommand, id, '--host', 'h2');
  expect(resumed.code, resumed.err).toBe(0);
  expect(resumed.err).toMatch(/coordinator\.log {2}\d+\.\d MiB \(continued from \d+\.\d MiB\)/);
  expect(resumed.out).toMatch(/: 1 file copied/);
  expect(readFileSync(log).equals(whole)).toBe(true);
  expect(existsSync(log + '.part')).toBe(false);
  expect(statSync(log).mtimeMs).toBe(Math.floor(statSync(join(headRun(id), 'coordinator.log')).mtimeMs / 1000) * 1000);
}, 300_000);

test('stop on a finished job says so and keeps it finished; pull names an unknown job and an unreachable host', async () => {
  const id = await deploy('--steps', '10');
  for (let i = 0; i < 900 && (await stateOf(id)) !== 'finished'; i++) await sleep(100);
  const s = await run(runStopCommand, id);
  expect(s.code).toBe(0);
  expect(s.out).toBe(`job ${id} already finished; nothing to stop. Its history: shoal attach ${id}; its files: shoal pull ${id}\n`);
  expect(await stateOf(id)).toBe('finished');

  const unknown = await run(runPullCommand, 'no-such-job');
  expect(unknown.code).toBe(1);
  expect(unknown.err).toMatch(/^shoal pull: No deployed job "no-such-job"/);
  const badHost = await run(runPullCommand, id, '--host', 'h9');
  expect(badHost.err).toContain(`--host h9: not a host of job ${id} (its hosts: h2, h3).`);

  await servers[1].stop();
  const partly = await run(runPullCommand, id);
  expect(partly.code).toBe(1);
  expect(partly.err).toMatch(/^h3\s+FAIL h3 \(.*@127\.0\.0\.3:\d+\): Cannot reach 127\.0\.0\.3:\d+: connection refused/m);
  expect(partly.out).toContain(`job ${id}: copied from 1 of 2 hosts into`);
  expect(existsSync(join(localRun(id), 'events.jsonl'))).toBe(true);
}, 300_000);

test('a detached job on this machine is pulled from ~/.shoal/runs locally', async () => {
  const d = await run(runDeployCommand, '--cluster', 'local', '--model', 'mlp', '--plan', 'pp1-dp1', '--steps', '5', '--json');
  expect(d.code, d.err).toBe(0);
  const id = jsonLines<{ jobId?: string }>(d.out)[0].jobId!;
  const p = await run(runPullCommand, id, '--json');
  expect(p.code, p.err).toBe(0);
  const [local] = (JSON.parse(p.out) as { hosts: Array<{ host: string; copied: number }> }).hosts;
  expect(local.host).toBe('localhost');
  expect(local.copied).toBeGreaterThan(0);
  expect(readFileSync(join(localRun(id), 'events.jsonl'), 'utf8')).toBe(readFileSync(join(env.home, '.shoal', 'runs', id, 'events.jsonl'), 'utf8'));
  expect(readdirSync(join(localRun(id), 'checkpoints')).some((f) => /^step-\d+\.ckpt$/.test(f))).toBe(true);
});
