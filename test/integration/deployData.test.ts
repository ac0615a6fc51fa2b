import { randomBytes } from 'node:crypto';
import { existsSync, mkdirSync, readdirSync, readFileSync, statSync, truncateSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, test } from 'vitest';
import { runAttachCommand } from '../../engine/node/commands/attach.js';
import { runDeployCommand } from '../../engine/node/commands/deploy.js';
import { digestFile } from '../../engine/node/deploy/fileDigest.js';
import { connectHost } from '../../engine/node/deploy/ssh/connectHost.js';
import { uploadPayload, type Payload } from '../../engine/node/deploy/uploadPayload.js';
import { saveClusterHosts } from '../../engine/node/hosts/clusterStore.js';
import type { JobEvent } from '../../engine/protocol/events.js';
import { runCommand as run, jsonLines, endDeployTests } from '../support/commandRun.js';
import { hostHome, useTempHome } from '../support/homes.js';
import { hostFor, makeUserKey, startHostsWithHomes, startSshd, type PrivateSshd, type UserKey } from '../support/sshd.js';
import { saveLayersModel, tf, tfl } from '../support/userModels.js';

/**
 * Where a deployed job's data lives: uploaded from here (any format; once per content; an interrupted
 * upload continues; the host's free space checked first), or already at the same path on every host
 * (checked per host, nothing uploaded). Each simulated host is a real sshd with its own $HOME.
 */
let env: ReturnType<typeof useTempHome>;
let key: UserKey;
let servers: PrivateSshd[];
let homes: string[];
let modelFile: string;
let csv: string;
const aliases = ['d2', 'd3'];

beforeAll(async () => {
  env = useTempHome();
  process.env.SHOAL_DATA_DIR = join(env.home, 'data');
  key = makeUserKey(join(env.home, 'keys'), 'id_data');
  ({ servers, homes } = await startHostsWithHomes(aliases, [key.publicKey]));
  saveClusterHosts('data', servers.map((s, i) => hostFor(s, aliases[i], key.path)));
  // A host whose `df` reports 1 MiB free: a stand-in earlier on its PATH (startSshd's pathPrefix).
  const tinyHome = hostHome('tiny');
  homes.push(tinyHome);
  const bin = join(tinyHome, 'bin');
  mkdirSync(bin);
  writeFileSync(join(bin, 'df'), '#!/bin/sh\necho "Filesystem 1024-blocks Used Available Capacity Mounted on"\necho "tiny 2048 1024 1024 50% /"\n', { mode: 0o755 });
  const tiny = await startSshd({ address: '127.0.0.4', authorizedKeys: [key.publicKey], home: tinyHome, pathPrefix: [bin] });
  saveClusterHosts('tiny', [hostFor(tiny, 'tiny', key.path)]);

  await tf.setBackend('cpu');
  const input = tfl.input({ shape: [4], name: 'features' });
  const hidden = tfl.layers.dense({ units: 8, activation: 'relu', name: 'hidden' }).apply(input) as tfl.SymbolicTensor;
  const output = tfl.layers.dense({ units: 3, activation: 'softmax', name: 'label' }).apply(hidden) as tfl.SymbolicTensor;
  modelFile = await saveLayersModel(tfl.model({ inputs: input, outputs: output }), join(env.home, 'model'));
  const rows = ['a,b,c,d,label'];
  for (let i = 0; i < 96; i++) rows.push(`${(i % 7) / 7},${(i % 5) / 5},${(i % 3) / 3},${(i % 11) / 11},${i % 3}`);
  csv = join(env.home, 'table', 'table.csv');
  mkdirSync(join(env.home, 'table'));
  writeFileSync(csv, rows.join('\n') + '\n');
}, 120_000);

afterAll(() => endDeployTests(homes, env));

const deployArgs = (cluster: string, ...data: string[]) => ['--cluster', cluster, '--model', modelFile, ...data, '--plan', 'pp2-dp1', '--batch', '16', '--steps', '4', '--trust-new', '--detach', '--json'];

async function trained(out: string): Promise<JobEvent[]> {
  const deployed = jsonLines<{ type: string; jobId: string }>(out).find((e) => e.type === 'deployed')!;
  const a = await run(runAttachCommand, deployed.jobId, '--json');
  expect(a.code, a.err).toBe(0);
  return jsonLines<JobEvent>(a.out);
}

describe('data uploaded from this machine', () => {
  test('a CSV table goes to inputs/<hash>/ on each host (the file only, verified), trains there, and is not sent again', async () => {
    const d = await run(runDeployCommand, ...deployArgs('data', '--data', csv));
    expect(d.err).not.toContain('shoal deploy:');
    expect(d.code).toBe(0);
    for (const a of aliases) {
      expect(d.err).toMatch(new RegExp(`^${a}\\s+upload\\s+uploading \\d+\\.\\d of \\d+\\.\\d MiB \\(100%\\)`, 'm'));
      expect(d.err).toMatch(new RegExp(`^${a}\\s+upload\\s+ok\\s+model and data uploaded to ~/\\.shoal/inputs/\\w+ \\(0\\.0 MiB sent\\)`, 'm'));
    }
    const events = await trained(d.out);
    expect(events.filter((e) => e.type === 'step')).toHaveLength(4);
    expect(new Set(events.filter((e) => e.type === 'agent').map((e) => (e as { host: string }).host))).toEqual(new Set(aliases));
    for (const home of homes.slice(0, 2)) {
      const [hash] = readdirSync(join(home, '.shoal', 'inputs')).filter((f) => !f.startsWith('.'));
      const dir = join(home, '.shoal', 'inputs', hash);
      expect(readFileSync(join(dir, 'data', 'table.csv'))).toEqual(readFileSync(csv));
      expect(existsSync(join(dir, 'model', 'weights.bin'))).toBe(true);
      expect(JSON.parse(readFileSync(join(dir, '.shoal-complete'), 'utf8'))).toMatchObject({ hash, files: 3 });
      // Nothing left of the upload beside it: no staging folder, no lock.
      expect(readdirSync(join(home, '.shoal', 'inputs')).filter((f) => f.startsWith('.'))).toEqual([]);
    }

    const again = await run(runDeployCommand, ...deployArgs('data', '--data', csv));
    expect(again.code).toBe(0);
    for (const a of aliases) expect(again.err).toMatch(new RegExp(`^${a}\\s+upload\\s+skip\\s+model and data ~/\\.shoal/inputs/\\S+ already there \\(0 MiB sent\\)`, 'm'));
    expect(again.err).not.toMatch(/uploading/);
  }, 300_000);

  test('an interrupted upload continues from the part the host has, and the file ends identical', async () => {
    const big = join(env.home, 'big.bin');
    writeFileSync(big, randomBytes(6 * 1024 * 1024 + 12345));
    const { bytes, digest } = digestFile(big);
    const payload: Payload = { hash: `resume${digest.slice(0, 8)}`, files: [{ local: big, relative: 'data/big.bin', bytes, digest }], bytes };
    const { client, close } = await connectHost(hostFor(servers[0], 'd2', key.path));
    try {
      const cut = uploadPayload(client, payload, 'inputs', (line) => {
        if (/\((\d+)%\)/.test(line) && Number(/\((\d+)%\)/.exec(line)![1]) >= 50) throw new Error('cut off for the test');
      });
      await expect(cut).rejects.toThrow(/uploading the model and data to .* failed: cut off for the test/);
      const part = join(homes[0], '.shoal', 'inputs', `.upload-${payload.hash}`, 'data', 'big.bin.part');
      const left = statSync(part).size;
      expect(left).toBeGreaterThan(2 * 1024 * 1024);
      expect(left).toBeLessThan(bytes);
      // A torn end, as a killed transfer leaves it.
      truncateSync(part, left - 4321);

      const lines: string[] = [];
      const result = await uploadPayload(client, payload, 'inputs', (line) => lines.push(line));
      const resumed = /^resuming: (\d+\.\d) of (\d+\.\d) MiB already on the host/.exec(lines[0]);
      expect(resumed, lines.join('\n')).not.toBeNull();
      expect(Number(resumed![1])).toBeGreaterThan(1);
      expect(result.sent).toBeLessThan(bytes - 1024 * 1024);
      expect(lines.at(-1)).toMatch(/MiB on the host, .* MiB sent, verified$/);
      const final = join(homes[0], '.shoal', 'inputs', payload.hash);
      expect(readFileSync(join(final, 'data', 'big.bin')).equals(readFileSync(big))).toBe(true);
      expect(existsSync(join(homes[0], '.shoal', 'inputs', `.upload-${payload.hash}`))).toBe(false);
    } finally {
      close();
    }
  }, 120_000);

  test('a part whose bytes differ from this machine\'s file is sent again from the start', async () => {
    const file = join(env.home, 'changed.bin');
    writeFileSync(file, randomBytes(4 * 1024 * 1024));
    const { bytes, digest } = digestFile(file);
    const payload: Payload = { hash: `changed${digest.slice(0, 8)}`, files: [{ local: file, relative: 'x.bin', bytes, digest }], bytes };
    const { client, close } = await connectHost(hostFor(servers[0], 'd2', key.path));
    try {
      await expect(uploadPayload(client, payload, 'inputs', (line) => {
        if (/\((\d+)%\)/.test(line) && Number(/\((\d+)%\)/.exec(line)![1]) >= 50) throw new Error('cut off for the test');
      })).rejects.toThrow(/cut off for the test/);
      const part = join(homes[0], '.shoal', 'inputs', `.upload-${payload.hash}`, 'x.bin.part');
      const bad = readFileSync(part);
      bad[10] ^= 0xff;
      writeFileSync(part, bad);
      const lines: string[] = [];
      const result = await uploadPayload(client, payload, 'inputs', (line) => lines.push(line));
      expect(lines.some((l) => l.startsWith('resuming'))).toBe(false);
      expect(result.sent).toBe(bytes);
      expect(readFileSync(join(homes[0], '.shoal', 'inputs', payload.hash, 'x.bin')).equals(readFileSync(file))).toBe(true);
    } finally {
      close();
    }
  }, 120_000);

  test('two deploys of the same content to one host at once: one uploads, the other waits for it and sends nothing', async () => {
    const file = join(env.home, 'shared-upload.bin');
    writeFileSync(file, randomBytes(3 * 1024 * 1024));
    const { bytes, digest } = digestFile(file);
    const payload: Payload = { hash: `race${digest.slice(0, 8)}`, files: [{ local: file, relative: 'data/x.bin', bytes, digest }], bytes };
    const conns = await Promise.all([0, 1].map(() => connectHost(hostFor(servers[1], 'd3', key.path))));
    try {
      const lines: string[][] = [[], []];
      const results = await Promise.all(conns.map((c, i) => uploadPayload(c.client, payload, 'inputs', (l) => lines[i].push(l))));
      expect(results.map((r) => r.uploaded).sort()).toEqual([false, true]);
      const waiter = results.findIndex((r) => !r.uploaded);
      expect(lines[waiter].join('\n')).toMatch(/another deploy is uploading model and data \S+ to this host; waiting for it[\s\S]*uploaded by another deploy meanwhile: 0 MiB to upload/);
      expect(readFileSync(join(homes[1], '.shoal', 'inputs', payload.hash, 'data', 'x.bin')).equals(readFileSync(file))).toBe(true);
    } finally {
      for (const c of conns) c.close();
    }
  }, 120_000);

  test('a host with too little free space fails before anything is uploaded, with the space needed and free', async () => {
    const d = await run(runDeployCommand, ...deployArgs('tiny', '--data', csv));
    expect(d.code).toBe(1);
    expect(d.err).toMatch(/tiny \(\S*127\.0\.0\.4:\d+\), upload: not enough disk space: \d+\.\d MiB to upload to ~\/\.shoal \(agent \d+\.\d MiB, model and data 0\.0 MiB\), 1\.0 MiB free there/);
    expect(d.err).not.toMatch(/uploading/);
    const tinyHome = homes[2];
    for (const kind of ['agent', 'inputs']) expect(existsSync(join(tinyHome, '.shoal', kind)) ? readdirSync(join(tinyHome, '.shoal', kind)) : []).toEqual([]);
  }, 120_000);
});

describe('a local job', () => {
  test('reads the data in place: nothing is copied', async () => {
    const d = await run(runDeployCommand, ...deployArgs('local', '--data', csv));
    expect(d.err).not.toContain('shoal deploy:');
    expect(d.code).toBe(0);
    expect((await trained(d.out)).filter((e) => e.type === 'step')).toHaveLength(4);
    expect(existsSync(join(env.home, '.shoal', 'inputs'))).toBe(false);
    expect(d.err).not.toMatch(/uploading/);
  }, 300_000);
});

describe('data already at the same path on every host', () => {
  const shared = (home: string) => join(home, 'shared', 'table.csv');
  const place = (home: string, content: Buffer) => {
    mkdirSync(join(home, 'shared'), { recursive: true });
    writeFileSync(shared(home), content);
  };

  test('a host without the data, or with another copy, is named with the path; with the same copy everywhere nothing is uploaded', async () => {
    // `~/shared/table.csv` is the same path on every host: each host's own home.
    place(env.home, readFileSync(csv));
    const description = join(env.home, 'shared', 'dataset.json');
    writeFileSync(description, JSON.stringify({ format: 'csv', source: '~/shared/table.csv', location: 'hosts' }));
    place(homes[0], readFileSync(csv));

    const missing = await run(runDeployCommand, ...deployArgs('data', '--data', description));
    expect(missing.code).toBe(1);
    expect(missing.err).toMatch(/d3 \(\S*127\.0\.0\.3:\d+\), connect: the dataset is meant to be at the same path on every host \(location "hosts"\), but on this host ~\/shared\/table\.csv does not exist/);
    expect(missing.err).not.toMatch(/✗ d2/);

    place(homes[1], Buffer.concat([readFileSync(csv), Buffer.from('0,0,0,0,1\n')]));
    const other = await run(runDeployCommand, ...deployArgs('data', '--data-on-hosts', join(env.home, 'shared')));
    expect(other.code).toBe(1);
    expect(other.err).toMatch(/d3 \(\S*127\.0\.0\.3:\d+\), connect: .* on this host ~\/shared\/table\.csv has \d+ bytes, but \d+ here/);

    place(homes[1], readFileSync(csv));
    const d = await run(runDeployCommand, ...deployArgs('data', '--data', description));
    expect(d.err).not.toContain('shoal deploy:');
    expect(d.code).toBe(0);
    for (const a of aliases) expect(d.err).toMatch(new RegExp(`^${a}\\s+connect\\s+ok\\s+data at ~/shared on the host: 1 file\\(s\\), 0\\.0 MiB, the same as here; nothing to upload`, 'm'));
    const events = await trained(d.out);
    expect(events.filter((e) => e.type === 'step')).toHaveLength(4);
  }, 300_000);
});
