import { writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, test } from 'vitest';
import { dispatchCall } from '../../electron/rpcDispatch.js';
import { createStudioService, type StudioService } from '../../engine/node/api.js';
import type { ClusterTestStatus } from '../../engine/protocol/clusters.js';
import { makeUserKey, stopAllSshd, type PrivateSshd, type UserKey, startHostsWithHomes } from '../support/sshd.js';
import { useTempHome, removeHomes } from '../support/homes.js';

/** The studio's Cluster view API against real sshd servers: add, import, test, trust-on-first-use, link survey. */
let env: ReturnType<typeof useTempHome>;
let key: UserKey;
let a: PrivateSshd;
let b: PrivateSshd;
let service: StudioService;
/** Each host's own $HOME, so the survey's agent upload and logs stay out of the real one. */
let homes: string[];

beforeAll(async () => {
  env = useTempHome();
  key = makeUserKey(join(env.home, '.ssh'), 'id_lab');
  let servers: PrivateSshd[];
  ({ servers, homes } = await startHostsWithHomes(['a', 'b'], [key.publicKey]));
  [a, b] = servers;
  service = createStudioService({ shell: 'web' });
});

afterAll(async () => {
  await service?.close();
  await stopAllSshd();
  removeHomes(homes);
  env?.restore();
});

/** Poll a test until `until` holds (the view does the same); the vitest timeout bounds it. */
async function waitFor(testId: string, until: (s: ClusterTestStatus) => boolean): Promise<ClusterTestStatus> {
  for (;;) {
    const status = await service.clusterTestStatus(testId);
    if (until(status)) return status;
    await new Promise((r) => setTimeout(r, 50));
  }
}

describe('studio cluster API', () => {
  test('adds hosts; a test asks to trust each unknown key by fingerprint; trusted passes preflight, refused fails on hostKey', async () => {
    const listing = await service.addClusterHosts({ cluster: 'lab', hosts: [`${a.user}@${a.address}:${a.port}`, `${b.user}@${b.address}:${b.port}`], identityFile: key.path });
    expect(listing.clusters).toEqual([{ name: 'lab', hosts: [expect.objectContaining({ alias: '127.0.0.2', port: a.port, identityFiles: [key.path] }), expect.objectContaining({ alias: '127.0.0.3' })] }]);
    expect(listing.file).toBe(join(env.configDir, 'clusters.json'));

    const { testId } = await service.startClusterTest('lab');
    const asking = await waitFor(testId, (s) => s.trust.length === 2);
    const byAddress = (address: string) => asking.trust.find((t) => t.where.includes(address))!;
    expect(byAddress('127.0.0.2')).toMatchObject({ keyType: 'ssh-ed25519', fingerprint: a.hostFingerprint() });
    expect(byAddress('127.0.0.3').fingerprint).toBe(b.hostFingerprint());
    expect(asking.state).toBe('running');

    await service.answerHostKey({ testId, promptId: byAddress('127.0.0.2').id, trust: true });
    await service.answerHostKey({ testId, promptId: byAddress('127.0.0.3').id, trust: false });
    const done = await waitFor(testId, (s) => s.state === 'done');
    expect(done.ready).toBe(1);
    const [hostA, hostB] = ['127.0.0.2', '127.0.0.3'].map((alias) => done.hosts.find((h) => h.host === alias)!);
    expect(hostA.ok).toBe(true);
    expect(hostA.steps.find((s) => s.step === 'hostKey')).toMatchObject({ status: 'ok', detail: expect.stringContaining('newly trusted') });
    expect(hostA.facts).toMatchObject({ os: expect.any(String), cpus: expect.any(Number), gpus: expect.any(Array) });
    expect(hostB.ok).toBe(false);
    expect(hostB.steps.find((s) => s.step === 'hostKey')).toMatchObject({ status: 'fail', detail: expect.stringContaining(b.hostFingerprint()) });

    // Answering twice is an error that says why; the trusted key is not asked about again.
    await expect(service.answerHostKey({ testId, promptId: byAddress('127.0.0.2').id, trust: true })).rejects.toThrow(/answered already or timed out/);
    const again = await service.startClusterTest('lab');
    const second = await waitFor(again.testId, (s) => s.trust.length > 0 || s.state === 'done');
    expect(second.trust.map((t) => t.fingerprint)).toEqual([b.hostFingerprint()]);
    await service.answerHostKey({ testId: again.testId, promptId: second.trust[0].id, trust: true });
    const surveyed = await waitFor(again.testId, (s) => s.state === 'done');
    expect(surveyed.ready).toBe(2);

    // Both hosts passed, so agents on them measured the link between them; the first test, with one
    // host refused, skipped the survey and said why.
    expect(done.survey).toMatchObject({ state: 'skipped', detail: expect.stringContaining('two hosts that pass preflight') });
    expect(surveyed.survey?.state, surveyed.survey?.detail).toBe('done');
    expect(surveyed.survey?.steps.filter((s) => s.step === 'agent' && s.status === 'ok').map((s) => s.host).sort()).toEqual(['127.0.0.2', '127.0.0.3']);
    const profile = surveyed.survey!.profile!;
    expect(profile.hosts).toEqual(['127.0.0.2', '127.0.0.3']);
    expect(profile.links).toHaveLength(1);
    expect(profile.links[0].beta).toBeGreaterThan(0);
    expect(profile.links[0].alpha).toBeGreaterThan(0);
    // The listing carries the stored matrix, which is what the view shows when it opens.
    const stored = (await service.listClusters()).clusters.find((c) => c.name === 'lab');
    expect(stored?.links).toEqual(profile);
  });

  test('imports hosts from an ssh config, and refuses bad requests through the dispatcher', async () => {
    const config = join(env.home, 'ssh_config');
    writeFileSync(config, ['Host gpu1', '    HostName 127.0.0.2', `    Port ${a.port}`, `    User ${a.user}`, '    IdentityFile ~/.ssh/id_lab', ''].join('\n'));
    const imported = await service.importClusterHosts({ cluster: 'imported', sshConfig: config });
    expect(imported).toMatchObject({ imported: ['gpu1'], from: config });
    expect(imported.clusters.find((c) => c.name === 'imported')?.hosts).toEqual([expect.objectContaining({ alias: 'gpu1', address: '127.0.0.2', port: a.port, identityFiles: [key.path] })]);

    const bad = await dispatchCall(service, { kind: 'call', id: 1, method: 'addClusterHosts', params: [{ cluster: '../x', hosts: ['h'] }] });
    expect(bad).toMatchObject({ ok: false, error: expect.stringMatching(/Bad parameters for addClusterHosts: 0\.cluster: a cluster name/) });
    const missingKey = await dispatchCall(service, { kind: 'call', id: 2, method: 'addClusterHosts', params: [{ cluster: 'x', hosts: ['me@10.0.0.1'], identityFile: '/nope/id' }] });
    expect(missingKey).toMatchObject({ ok: false, error: 'Identity file /nope/id does not exist.' });
    const noCluster = await dispatchCall(service, { kind: 'call', id: 3, method: 'startClusterTest', params: ['nope'] });
    expect(noCluster).toMatchObject({ ok: false, error: expect.stringMatching(/No cluster "nope"/) });
  });
});
