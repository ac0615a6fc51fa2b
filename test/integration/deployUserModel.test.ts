import { existsSync, readdirSync } from 'node:fs';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, test } from 'vitest';
import { runAttachCommand } from '../../engine/node/commands/attach.js';
import { runDeployCommand } from '../../engine/node/commands/deploy.js';
import type { StartedProcess } from '../../engine/node/deploy/launcher.js';
import { saveClusterHosts } from '../../engine/node/hosts/clusterStore.js';
import type { JobEvent } from '../../engine/protocol/events.js';
import { runCommand as run, jsonLines, endDeployTests } from '../support/commandRun.js';
import { hostFor, makeUserKey, startHostsWithHomes, type PrivateSshd, type UserKey } from '../support/sshd.js';
import { useTempHome } from '../support/homes.js';
import { saveLayersModel, tf, twoInTwoOut, writeNpyData, TWO_IN_TWO_OUT_ARRAYS } from '../support/userModels.js';

/**
 * A user's own model deployed over SSH: the model file, its weights and the NumPy data travel to each
 * host (which has its own $HOME, so nothing is shared through the file system), once per content.
 */
let env: ReturnType<typeof useTempHome>;
let key: UserKey;
let servers: PrivateSshd[];
let homes: string[];
let modelFile: string;
let dataDir: string;
const aliases = ['u2', 'u3'];

beforeAll(async () => {
  env = useTempHome();
  process.env.SHOAL_DATA_DIR = join(env.home, 'data');
  key = makeUserKey(join(env.home, 'keys'), 'id_user_model');
  ({ servers, homes } = await startHostsWithHomes(aliases, [key.publicKey]));
  saveClusterHosts('users', servers.map((s, i) => hostFor(s, aliases[i], key.path)));
  await tf.setBackend('cpu');
  modelFile = await saveLayersModel(twoInTwoOut(), join(env.home, 'model'));
  dataDir = join(env.home, 'data-in');
  writeNpyData(dataDir, TWO_IN_TWO_OUT_ARRAYS, 80);
  writeNpyData(join(dataDir, 'val'), TWO_IN_TWO_OUT_ARRAYS, 16, 2);
}, 120_000);

afterAll(() => endDeployTests(homes, env));

describe('shoal deploy --model model.json --data DIR', () => {
  test('uploads the model, its weights and the data once per content, trains on both hosts and validates on val/', async () => {
    const args = ['--cluster', 'users', '--model', modelFile, '--data', dataDir, '--plan', 'pp2-dp1', '--batch', '16', '--steps', '6', '--trust-new', '--detach', '--json'];
    const d = await run(runDeployCommand, ...args);
    expect(d.err).not.toContain('shoal deploy:');
    expect(d.code).toBe(0);
    for (const a of aliases) expect(d.err).toMatch(new RegExp(`^${a}\\s+upload\\s+ok\\s+model and data uploaded to ~/\\.shoal/inputs/`, 'm'));
    const deployed = jsonLines<{ type: string; jobId: string; processes: StartedProcess[] }>(d.out).find((e) => e.type === 'deployed')!;
    // Each host has the files in its own home.
    for (const home of homes) {
      const [inputs] = readdirSync(join(home, '.shoal', 'inputs')).filter((f) => !f.startsWith('.'));
      for (const file of ['model/model.json', 'model/weights.bin', 'data/a.npy', 'data/cls.npy', 'data/val/reg.npy']) expect(existsSync(join(home, '.shoal', 'inputs', inputs, file)), file).toBe(true);
    }
    const a = await run(runAttachCommand, deployed.jobId, '--json');
    expect(a.code).toBe(0);
    const events = jsonLines<JobEvent>(a.out);
    expect(events.filter((e) => e.type === 'step')).toHaveLength(6);
    expect(new Set(events.filter((e) => e.type === 'agent').map((e) => (e as { host: string }).host))).toEqual(new Set(aliases));
    const final = events.find((e) => e.type === 'final') as Extract<JobEvent, { type: 'final' }>;
    expect(final.validationLoss).toBeGreaterThan(0);
    expect(final.validationAccuracy).toBeGreaterThanOrEqual(0);

    // The same model and data again: nothing to upload.
    const again = await run(runDeployCommand, ...args);
    expect(again.code).toBe(0);
    for (const a of aliases) expect(again.err).toMatch(new RegExp(`^${a}\\s+upload\\s+skip\\s+model and data ~/\\.shoal/inputs/\\S+ already there`, 'm'));
  }, 240_000);

  test('a data folder that does not fit the model is refused before any host is touched, naming the file', async () => {
    const d = await run(runDeployCommand, '--cluster', 'users', '--model', modelFile, '--data', join(dataDir, 'val', 'missing'), '--steps', '2', '--trust-new', '--json');
    expect(d.code).toBe(1);
    expect(d.err).toMatch(/shoal deploy: NumPy folder .*missing does not exist/);
    expect(d.err).not.toMatch(/connect/);
  });
});
