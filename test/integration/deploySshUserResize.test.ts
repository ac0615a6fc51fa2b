import { existsSync, readdirSync, readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, test } from 'vitest';
import { runAttachCommand } from '../../engine/node/commands/attach.js';
import { runDeployCommand } from '../../engine/node/commands/deploy.js';
import { runJobsCommand, type JobSummary } from '../../engine/node/commands/jobs.js';
import { runResizeCommand } from '../../engine/node/commands/resize.js';
import { runStopCommand } from '../../engine/node/commands/stop.js';
import { saveClusterHosts } from '../../engine/node/hosts/clusterStore.js';
import { listDeployRecords } from '../../engine/node/jobs/deployRecord.js';
import { loadModel, modelRef } from '../../engine/node/modelRef.js';
import { presetPlan } from '../../engine/plan/presets.js';
import type { JobEvent } from '../../engine/protocol/events.js';
import { readCheckpoint } from '../../engine/wire/checkpointFile.js';
import { readLayersModel } from '../../engine/wire/layersModelFile.js';
import { runCommand as run, jsonLines, endDeployTests } from '../support/commandRun.js';
import { useTempHome } from '../support/homes.js';
import { hostFor, makeUserKey, startHostsWithHomes, type PrivateSshd, type UserKey } from '../support/sshd.js';
import { saveLayersModel, tf, twoInTwoOut, writeNpyData, TWO_IN_TWO_OUT_ARRAYS } from '../support/userModels.js';

/**
 * A job that trains the user's own model (model.json + weights.bin) on the user's own NumPy data,
 * deployed over real OpenSSH to r2+r3, grown with `shoal resize --add r4`: a host of another stored
 * cluster whose home has never seen the job. r4 must get the same content-addressed model and data
 * (under the job's remote directory, where the coordinator tells every agent to read them), join the
 * next generation and train in it; the job then finishes with finite numbers. Data changed here since
 * the deploy would reach a new host under another content address than the one the job's agents open:
 * that resize is refused before the host is touched. Each host has its own $HOME, so nothing reaches r4
 * through the file system.
 */
let env: ReturnType<typeof useTempHome>;
let key: UserKey;
let servers: PrivateSshd[];
let homes: string[];
let modelFile: string;
let dataDir: string;
let planFile: string;
const aliases = ['r2', 'r3', 'r4'];
/** The job's cluster keeps its files here on each host (not the default ~/.shoal): the new host must follow the job's setting. */
const REMOTE_DIR = '~/shoal-work';
const remoteRoot = (home: string) => join(home, 'shoal-work');
const STEPS = 3000;
/** The model's two inputs and two targets, as .npy files. */

beforeAll(async () => {
  env = useTempHome();
  process.env.SHOAL_DATA_DIR = join(env.home, 'data');
  key = makeUserKey(join(env.home, 'keys'), 'id_user_resize');
  ({ servers, homes } = await startHostsWithHomes(aliases, [key.publicKey]));
  const hosts = servers.map((s, i) => hostFor(s, aliases[i], key.path));
  saveClusterHosts('pair', hosts.slice(0, 2), { remoteDir: REMOTE_DIR });
  saveClusterHosts('spare', hosts.slice(2));

  await tf.setBackend('cpu');
  modelFile = await saveLayersModel(twoInTwoOut(), join(env.home, 'model'));
  dataDir = join(env.home, 'data-in');
  writeNpyData(dataDir, TWO_IN_TWO_OUT_ARRAYS, 96);
  writeNpyData(join(dataDir, 'val'), TWO_IN_TWO_OUT_ARRAYS, 16, 2);
  // Data parallel over two replicas with 4 virtual nodes, so a third replica can join and the global batch stays 16.
  const model = loadModel(modelFile);
  planFile = join(env.home, 'dp2-v4.json');
  writeFileSync(planFile, JSON.stringify({ ...presetPlan(model, 'pp1-dp2', { globalBatch: 16 }), model: modelRef(model), virtualNodes: { total: 4 } }));
}, 120_000);

afterAll(() => endDeployTests(homes, env));

/** The job's history on the head host, as far as it is written. */
const history = (id: string): JobEvent[] => {
  const file = join(remoteRoot(homes[0]), 'runs', id, 'events.jsonl');
  return existsSync(file) ? jsonLines<JobEvent>(readFileSync(file, 'utf8')) : [];
};

/** Poll until `ok` holds (bounded by attempts, not by time). */
async function until(what: string, ok: () => boolean | Promise<boolean>, attempts = 1200): Promise<void> {
  for (let i = 0; i < attempts; i++) {
    if (await ok()) return;
    await new Promise((r) => setTimeout(r, 100));
  }
  throw new Error(`never happened: ${what}`);
}

const jobState = async (id: string): Promise<JobSummary | undefined> => (JSON.parse((await run(runJobsCommand, '--json')).out) as JobSummary[]).find((j) => j.jobId === id);

/** Every file of an inputs/<hash> folder, relative to it (the upload's marker excluded). */
function filesUnder(dir: string, prefix = ''): string[] {
  return readdirSync(join(dir, prefix), { withFileTypes: true })
    .filter((e) => !e.name.startsWith('.'))
    .flatMap((e) => (e.isDirectory() ? filesUnder(dir, join(prefix, e.name)) : [join(prefix, e.name)]))
    .sort();
}

describe('shoal resize --add onto a fresh SSH host, for a job with the user\'s model and data', () => {
  test('the new host gets the model, weights and data (same content address), joins the next generation, and the job finishes with finite numbers', async () => {
    const d = await run(runDeployCommand, '--cluster', 'pair', '--model', modelFile, '--data', dataDir, '--plan-file', planFile, '--steps', String(STEPS), '--eval-every', String(STEPS), '--trust-new', '--detach', '--json');
    expect(d.err).not.toContain('shoal deploy:');
    expect(d.code).toBe(0);
    for (const a of ['r2', 'r3']) expect(d.err).toMatch(new RegExp(`^${a}\\s+upload\\s+ok\\s+model and data uploaded to ~/shoal-work/inputs/`, 'm'));
    const { jobId: id } = jsonLines<{ type: string; jobId: string }>(d.out).find((e) => e.type === 'deployed')!;
    const [hash] = readdirSync(join(remoteRoot(homes[0]), 'inputs')).filter((f) => !f.startsWith('.'));
    // r4 is fresh: nothing of Shoal's in its home before the resize.
    expect(existsSync(remoteRoot(homes[2]))).toBe(false);
    expect(existsSync(join(homes[2], '.shoal'))).toBe(false);

    await until('the job steps on r2+r3', () => history(id).some((e) => e.type === 'step' && e.step >= 5));
    const grow = await run(runResizeCommand, id, '--add', 'r4', '--trust-new', '--json');
    expect(grow.err).not.toContain('shoal resize:');
    expect(grow.code).toBe(0);
    expect(grow.err).toMatch(new RegExp(`^r4\\s+upload\\s+ok\\s+model and data uploaded to ~/shoal-work/inputs/${hash}\\b`, 'm'));
    expect(grow.err).toMatch(/^started agent-2 on r4 \(pid \d+\)$/m);
    const grown = JSON.parse(grow.out.trim()) as Extract<JobEvent, { type: 'membership' }>;
    expect(grown.reason).toBe('resize: +1');
    expect(grown.agents.map((a) => a.host).sort()).toEqual(['r2', 'r3', 'r4']);
    expect(grown.agents.map((a) => a.virtualNodes).reduce((a, b) => a + b)).toBe(4);

    // The same content address as on the job's hosts, every file byte for byte as here; the default ~/.shoal stays empty.
    const local: Record<string, string> = { 'model/model.json': modelFile, 'model/weights.bin': join(env.home, 'model', 'weights.bin') };
    for (const f of filesUnder(dataDir)) local[join('data', f)] = join(dataDir, f);
    const r4Inputs = join(remoteRoot(homes[2]), 'inputs');
    expect(readdirSync(r4Inputs).filter((f) => !f.startsWith('.'))).toEqual([hash]);
    expect(filesUnder(join(r4Inputs, hash))).toEqual(Object.keys(local).sort());
    for (const [rel, here] of Object.entries(local)) expect(readFileSync(join(r4Inputs, hash, rel)).equals(readFileSync(here)), rel).toBe(true);
    expect(existsSync(join(homes[2], '.shoal', 'inputs'))).toBe(false);

    // r4's agent trains in the grown generation: steps after it start, and the job's summary counts three agents.
    await until('a step of the grown generation', () => history(id).some((e) => e.type === 'step' && e.step > grown.step));
    const running = await jobState(id);
    expect(running?.state).toBe('running');
    expect(running?.agents?.training).toBe(3);
    expect(running?.detail).toMatch(/^3 training, 0 waiting, 0 lost/);
    const record = listDeployRecords().find((r) => r.record.jobId === id)!.record;
    expect(record.hosts.map((h) => h.alias)).toEqual(['r2', 'r3', 'r4']);
    expect(record.processes.map((p) => `${p.target}:${p.name}`)).toContain('r4:agent-2');

    // Released again: the two original agents finish the job.
    const r4Rank = grown.agents.find((a) => a.host === 'r4')!.rank;
    const shrink = await run(runResizeCommand, id, '--remove', String(r4Rank), '--json');
    expect(shrink.code, shrink.err).toBe(0);
    const shrunk = JSON.parse(shrink.out.trim()) as Extract<JobEvent, { type: 'membership' }>;
    expect(shrunk.agents.map((a) => a.host).sort()).toEqual(['r2', 'r3']);
    expect(shrunk.step).toBeGreaterThan(grown.step);

    await until('the job finishes', async () => (await jobState(id))?.state === 'finished', 3000);
    const a = await run(runAttachCommand, id, '--json', '--no-follow');
    expect(a.code, a.err).toBe(0);
    const events = jsonLines<JobEvent>(a.out);
    const steps = events.filter((e): e is Extract<JobEvent, { type: 'step' }> => e.type === 'step');
    expect(new Set(steps.map((s) => s.step)).size).toBe(STEPS);
    for (const s of steps) expect(Number.isFinite(s.loss), `loss at step ${s.step}`).toBe(true);
    // The grown generation trained steps of its own before r4 was released.
    expect(steps.some((s) => s.step >= grown.step && s.step < shrunk.step)).toBe(true);
    expect(events.some((e) => e.type === 'membership' && e.agents.some((x) => x.host === 'r4'))).toBe(true);
    const final = events.find((e) => e.type === 'final') as Extract<JobEvent, { type: 'final' }>;
    expect(final.steps).toBe(STEPS);
    expect(Number.isFinite(final.validationLoss)).toBe(true);
    expect(final.validationLoss).toBeGreaterThan(0);

    // The last checkpoint on the head: every parameter finite, and training moved them away from the model file's weights.
    const last = events.find((e) => e.type === 'checkpoint' && e.action === 'saved' && e.step === STEPS) as Extract<JobEvent, { type: 'checkpoint' }>;
    const { header, body } = readCheckpoint(join(remoteRoot(homes[0]), 'runs', id, last.path));
    expect(header.step).toBe(STEPS);
    expect(body.every(Number.isFinite)).toBe(true);
    const initial = readLayersModel(modelFile).weights!;
    for (const name of ['shared/kernel', 'hidden/kernel', 'cls/kernel', 'reg/kernel']) {
      const t = header.tensors.find((x) => x.name === name && x.slot === undefined)!;
      const trained = body.subarray(t.offset, t.offset + t.length);
      expect(trained.some((v, i) => v !== initial.get(name)!.values[i]), name).toBe(true);
    }
  }, 600_000);

  test('data changed here since the deploy: adding a fresh host is refused before it is touched, the job trains on; with the files back it joins', async () => {
    const changing = join(env.home, 'data-changing');
    writeNpyData(changing, TWO_IN_TWO_OUT_ARRAYS, 64, 5);
    const d = await run(runDeployCommand, '--cluster', 'pair', '--model', modelFile, '--data', changing, '--plan-file', planFile, '--steps', '100000', '--trust-new', '--detach', '--json');
    expect(d.code, d.err).toBe(0);
    const { jobId: id } = jsonLines<{ type: string; jobId: string }>(d.out).find((e) => e.type === 'deployed')!;
    const hash = new RegExp(`^r2\\s+upload\\s+ok\\s+model and data uploaded to ~/shoal-work/inputs/(\\w+)`, 'm').exec(d.err)![1];
    await until('the job steps on r2+r3', () => history(id).some((e) => e.type === 'step' && e.step >= 5));

    // Other values, same shapes: the files hash differently, but the job's agents read inputs/<hash> of the deploy.
    writeNpyData(changing, TWO_IN_TWO_OUT_ARRAYS, 64, 6);
    const inputsOnR4 = () => (existsSync(join(remoteRoot(homes[2]), 'inputs')) ? readdirSync(join(remoteRoot(homes[2]), 'inputs')).sort() : []);
    const before = inputsOnR4();
    const refused = await run(runResizeCommand, id, '--add', 'r4', '--trust-new', '--json');
    expect(refused.code).toBe(1);
    expect(refused.err).toMatch(
      new RegExp(`^shoal resize: The model or data files of job ${id} changed here since it was deployed: its agents read ~/shoal-work/inputs/${hash}, but .*data-changing/a\\.npy.* now make ~/shoal-work/inputs/(?!${hash})\\w+, so r4 would get other files than the job trains on\\. Put the files back`, 'm'),
    );
    expect(refused.err).not.toMatch(/^r4 /m);
    expect(inputsOnR4()).toEqual(before);
    const untouched = await jobState(id);
    expect(untouched?.state).toBe('running');
    expect(untouched?.agents?.training).toBe(2);

    writeNpyData(changing, TWO_IN_TWO_OUT_ARRAYS, 64, 5);
    const grow = await run(runResizeCommand, id, '--add', 'r4', '--trust-new', '--json');
    expect(grow.code, grow.err).toBe(0);
    expect(grow.err).toMatch(new RegExp(`^r4\\s+upload\\s+ok\\s+model and data uploaded to ~/shoal-work/inputs/${hash}\\b`, 'm'));
    expect((JSON.parse(grow.out.trim()) as Extract<JobEvent, { type: 'membership' }>).agents.map((a) => a.host).sort()).toEqual(['r2', 'r3', 'r4']);
    expect((await run(runStopCommand, id)).code).toBe(0);
  }, 600_000);
});
