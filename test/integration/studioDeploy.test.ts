import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, test } from 'vitest';
import { dispatchCall } from '../../electron/rpcDispatch.js';
import { createStudioService, type StudioService } from '../../engine/node/api.js';
import { saveClusterHosts } from '../../engine/node/hosts/clusterStore.js';
import type { SshHost } from '../../engine/node/hosts/host.js';
import { listDeployRecords } from '../../engine/node/jobs/deployRecord.js';
import { zooModel } from '../../engine/model/zoo.js';
import { presetPlan } from '../../engine/plan/presets.js';
import type { DeployStatus } from '../../engine/protocol/deploy.js';
import type { JobEvent } from '../../engine/protocol/events.js';
import { freePort, makeUserKey, stopAllSshd, type PrivateSshd, type UserKey, hostFor, startHostsWithHomes } from '../support/sshd.js';
import { useTempHome, removeHomes } from '../support/homes.js';
import { stopDeployedJobs } from '../support/commandRun.js';

/**
 * The studio's deploy API (what the Deploy button and "Jobs on clusters" call) against two real OpenSSH
 * servers on 127.0.0.2–3, each with its own $HOME: per-host progress with trust-on-first-use, the job's
 * events through the same stream as a local job, a studio restart that lists the job and re-attaches
 * with the whole history, one host down, and Stop.
 */
let env: ReturnType<typeof useTempHome>;
let key: UserKey;
let servers: PrivateSshd[];
let homes: string[];
const aliases = ['h2', 'h3'];
const open: StudioService[] = [];

const hostOf = (s: { address: string; port: number; user: string }, alias: string): SshHost => hostFor(s, alias, key.path);

beforeAll(async () => {
  env = useTempHome();
  process.env.SHOAL_DATA_DIR = join(env.home, 'data');
  key = makeUserKey(join(env.home, 'keys'), 'id_deploy');
  ({ servers, homes } = await startHostsWithHomes(aliases, [key.publicKey]));
  saveClusterHosts('lab', servers.map((s, i) => hostOf(s, aliases[i])));
});

afterAll(async () => {
  for (const s of open) await s.close();
  await stopDeployedJobs();
  await stopAllSshd();
  removeHomes(homes);
  delete process.env.SHOAL_DATA_DIR;
  env?.restore();
});

function studio(): StudioService {
  const service = createStudioService({ shell: 'web' });
  open.push(service);
  return service;
}

async function closeStudio(service: StudioService): Promise<void> {
  open.splice(open.indexOf(service), 1);
  await service.close();
}

/** Every event of one job as the renderer receives it, and a way to wait for one. */
function stream(service: StudioService, jobId: () => string | undefined) {
  const events: JobEvent[] = [];
  const waiters: Array<{ pred: (e: JobEvent) => boolean; resolve: (e: JobEvent) => void }> = [];
  service.onJobEvent((id, { event }) => {
    if (id !== jobId()) return;
    events.push(event);
    for (const w of waiters.filter((w) => w.pred(event))) w.resolve(event);
  });
  const until = (pred: (e: JobEvent) => boolean) => {
    const seen = events.find(pred);
    return seen ? Promise.resolve(seen) : new Promise<JobEvent>((resolve) => waiters.push({ pred, resolve }));
  };
  return { events, until };
}

/** Poll the deploy as the DeployProgress view does, trusting every unknown host key it asks about. */
async function followDeploy(service: StudioService, jobId: string, asked: string[] = []): Promise<DeployStatus> {
  for (;;) {
    const status = await service.deployStatus(jobId);
    for (const prompt of status.trust) {
      asked.push(prompt.where);
      await service.answerDeployHostKey({ jobId, promptId: prompt.id, trust: true });
    }
    if (status.phase !== 'preparing' && status.phase !== 'starting' && status.phase !== 'attaching') return status;
    await new Promise((r) => setTimeout(r, 20));
  }
}

const steps = (events: JobEvent[]) => events.filter((e): e is Extract<JobEvent, { type: 'step' }> => e.type === 'step').map((e) => e.step);
const mlpPlan = () => presetPlan(zooModel('mlp'), 'pp2-dp1');

describe('deploying from the studio', () => {
  test('per-host progress (trust asked per host), live events, then a restarted studio lists the job and re-attaches with the whole history', async () => {
    const first = studio();
    let jobId = '';
    const live = stream(first, () => jobId);
    const total = 300;
    jobId = (await first.deployJob({ plan: mlpPlan(), target: { kind: 'cluster', cluster: 'lab' }, steps: total, evalEverySteps: total })).jobId;
    const asked: string[] = [];
    const status = await followDeploy(first, jobId, asked);
    expect(status.error).toBeUndefined();
    expect(status).toMatchObject({ jobId, cluster: 'lab', phase: 'following', trust: [] });
    // Each host's unknown key was asked about once, through the same questions as the Cluster view.
    expect(asked.sort()).toEqual(servers.map((s) => `${s.user}@${s.address}:${s.port}`).sort());
    expect(status.hosts.map((h) => h.host)).toEqual(aliases);
    for (const host of status.hosts) {
      const step = (name: string) => host.steps.find((s) => s.step === name);
      expect(host.ok, host.host).toBe(true);
      expect(step('connect')).toMatchObject({ status: 'ok', detail: expect.stringMatching(/Node v?\d+/) });
      expect(step('upload')).toMatchObject({ status: 'ok', detail: expect.stringMatching(/^uploaded to ~\/\.shoal\/agent\//) });
      expect(step('upload')?.progress?.some((line) => /^uploading [\d.]+ of [\d.]+ MiB/.test(line)), host.host).toBe(true);
      expect(step('gpu-runtime')?.status).toBe('skipped');
      expect(step('ready')?.status).toBe('ok');
    }

    // The job's events come through the studio's one stream, as a local job's do.
    await live.until((e) => e.type === 'step' && e.step >= 3);
    expect((await first.listJobs()).find((j) => j.id === jobId)).toMatchObject({ model: 'mlp', agents: 2, state: 'running' });
    expect(new Set(live.events.filter((e) => e.type === 'agent').map((e) => (e as { host: string }).host))).toEqual(new Set(aliases));

    // Restart: the old studio goes (the job does not), a new one finds it in the run folders.
    await closeStudio(first);
    const second = studio();
    const listed = (await second.listDeployedJobs()).find((j) => j.jobId === jobId);
    expect(listed).toMatchObject({ cluster: 'lab', model: 'mlp', attached: false });
    // It ran on when the first studio closed: normally still running, finished if the hosts were quick.
    expect(['running', 'finished']).toContain(listed?.state);

    const again = stream(second, () => jobId);
    expect(await second.attachDeployedJob(jobId)).toEqual({ jobId });
    const final = await again.until((e) => e.type === 'final');
    expect(final.type === 'final' && final.steps).toBe(total);
    // The whole history, back-filled from the first step, each step once, in order.
    expect(steps(again.events)).toEqual(Array.from({ length: total }, (_, i) => i));
    expect(steps((await second.jobEvents(jobId, 0)).map((e) => e.event))).toHaveLength(total);
    expect((await second.listJobs()).find((j) => j.id === jobId)?.state).toBe('finished');
    expect((await second.deployStatus(jobId)).phase).toBe('following');
  });

  test('Add agent / Remove on a deployed job: the new agent goes to the host with fewest agents, the generation follows', async () => {
    const service = studio();
    let jobId = '';
    const live = stream(service, () => jobId);
    const plan = { ...presetPlan(zooModel('mlp'), 'pp1-dp2'), virtualNodes: { total: 4 } };
    jobId = (await service.deployJob({ plan, target: { kind: 'cluster', cluster: 'lab' }, steps: 100_000, evalEverySteps: 100_000 })).jobId;
    expect((await followDeploy(service, jobId)).error).toBeUndefined();
    await live.until((e) => e.type === 'step' && e.step >= 3);
    // h2 holds the coordinator and agent-0, h3 agent-1: the third agent goes to either (one each), h2 first.
    await service.resizeJob(jobId, { add: 1 });
    const grown = (await live.until((e) => e.type === 'membership' && e.agents.length === 3)) as Extract<JobEvent, { type: 'membership' }>;
    expect(grown.reason).toBe('resize: +1');
    expect(grown.agents.map((a) => a.host).sort()).toEqual(['h2', 'h2', 'h3']);
    expect(grown.agents.map((a) => a.virtualNodes).reduce((a, b) => a + b)).toBe(4);
    await service.resizeJob(jobId, { remove: [2] });
    const shrunk = (await live.until((e) => e.type === 'membership' && e.agents.length === 2 && e.reason.startsWith('resize: −'))) as Extract<JobEvent, { type: 'membership' }>;
    expect(shrunk.agents).toHaveLength(2);
    await expect(service.resizeJob(jobId, { hosts: ['nowhere'] })).rejects.toThrow(/No host "nowhere"/);
    await service.stopJob(jobId);
    await closeStudio(service);
  });

  test('one host down: its error names it and what failed, the others are reported ready, no job starts', async () => {
    const service = studio();
    const downPort = await freePort('127.0.0.4');
    saveClusterHosts('partly-down', [hostOf(servers[0], 'h2'), hostOf({ ...servers[1], address: '127.0.0.4', port: downPort }, 'down'), hostOf(servers[1], 'h3')]);
    let jobId = '';
    const events = stream(service, () => jobId);
    const before = listDeployRecords().length;
    jobId = (await service.deployJob({ plan: mlpPlan(), target: { kind: 'cluster', cluster: 'partly-down' }, steps: 10 })).jobId;
    const status = await followDeploy(service, jobId);
    expect(status.phase).toBe('failed');
    expect(status.error).toContain('1 of 3 hosts are not ready');
    const host = (name: string) => status.hosts.find((h) => h.host === name)!;
    expect(host('down')).toMatchObject({ ok: false, error: expect.stringContaining(`down (${servers[1].user}@127.0.0.4:${downPort}), connect: Cannot reach 127.0.0.4:${downPort}: connection refused. Check that the host is up`) });
    for (const name of ['h2', 'h3']) {
      expect(host(name).ok, name).toBe(true);
      // The agent build is on those hosts already: nothing is uploaded again.
      expect(host(name).steps.find((s) => s.step === 'upload')?.status).toBe('skipped');
    }
    // The Monitor hears of the failure through the job's stream.
    expect(await events.until((e) => e.type === 'status')).toMatchObject({ state: 'failed', message: expect.stringContaining('down (') });
    expect(listDeployRecords()).toHaveLength(before);
  });

  test('Stop on a job deployed to this machine kills it; the job list and its hosts agree', async () => {
    const service = studio();
    let jobId = '';
    const events = stream(service, () => jobId);
    jobId = (await service.deployJob({ plan: mlpPlan(), target: { kind: 'local' }, steps: 100_000 })).jobId;
    const status = await followDeploy(service, jobId);
    expect(status).toMatchObject({ cluster: 'local', phase: 'following', hosts: [{ host: 'localhost', ok: true }] });
    await events.until((e) => e.type === 'step' && e.step >= 2);
    await service.stopJob(jobId);
    expect(events.events.filter((e) => e.type === 'status').at(-1)).toMatchObject({ state: 'stopped' });
    expect((await service.listJobs()).find((j) => j.id === jobId)?.state).toBe('stopped');
    expect((await service.listDeployedJobs()).find((j) => j.jobId === jobId)).toMatchObject({ state: 'stopped', attached: false });
    // The coordinator went before its agents, so the history on the host says stopped, never failed.
    const history = readFileSync(join(env.home, '.shoal', 'runs', jobId, 'events.jsonl'), 'utf8').trim().split('\n').map((l) => JSON.parse(l) as JobEvent);
    expect(history.filter((e) => e.type === 'status').map((e) => e.state)).not.toContain('failed');
    expect(history.at(-1)).toMatchObject({ type: 'status', state: 'stopped' });
  });

  test('malformed requests are refused with the field at fault', async () => {
    const service = studio();
    const badTarget = await dispatchCall(service, { kind: 'call', id: 1, method: 'deployJob', params: [{ plan: mlpPlan(), target: { kind: 'cluster', cluster: '../x' } }] });
    expect(badTarget).toMatchObject({ ok: false, error: expect.stringMatching(/Bad parameters for deployJob: 0\.target\.cluster: a cluster name/) });
    const badId = await dispatchCall(service, { kind: 'call', id: 2, method: 'attachDeployedJob', params: ['../../etc'] });
    expect(badId).toMatchObject({ ok: false, error: expect.stringMatching(/Bad parameters for attachDeployedJob: 0: a job id looks like/) });
    await expect(service.deployJob({ plan: mlpPlan(), target: { kind: 'cluster', cluster: 'nope' } })).rejects.toThrow(/No cluster "nope" in .*clusters\.json\. Add it in Clusters first\./);
    await expect(service.deployStatus('job-20260101000000-abcdef')).rejects.toThrow(/No deployed job job-20260101000000-abcdef in this studio session/);
    await expect(service.attachDeployedJob('job-20260101000000-abcdef')).rejects.toThrow(/No deployed job job-20260101000000-abcdef in /);
  });
});
