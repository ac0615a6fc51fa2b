import { readFileSync, rmSync, writeFileSync } from 'node:fs';
import { beforeEach, describe, expect, it } from 'vitest';
import type { HostPreflight } from '../../engine/node/deploy/ssh/preflight.js';
import { clustersService } from '../../engine/node/clustersService.js';
import { clustersFile, findCluster, loadClusters, saveClusterTest } from '../../engine/node/hosts/clusterStore.js';
import { testRecord } from '../../engine/node/hosts/clusterTestRecord.js';
import { storeClusterTest } from '../../engine/node/hosts/storeClusterTest.js';
import type { SurveyOutcome } from '../../engine/node/hosts/surveyAfterPreflight.js';
import { testedAgo } from '../../renderer/src/clusters/testedAgo.js';
import { useTempConfigDir } from '../support/configDir.js';

/**
 * A cluster's last connection test, stored with it in clusters.json (the studio reads it back after a
 * restart), against a real clusters.json in a temporary config folder and the studio's cluster service.
 */
useTempConfigDir('shoal-cluster-tests-');

const api = clustersService();
const AT = Date.UTC(2026, 11, 1, 9, 0);

/** Preflight results: `ok` hosts with 8 CPUs and one A100, the others failing to connect. */
function results(ok: Record<string, boolean>): HostPreflight[] {
  return Object.entries(ok).map(([host, passed]) => ({
    host,
    where: `${host}:22`,
    ok: passed,
    steps: passed ? [{ step: 'reachable', status: 'ok', detail: 'connected' }] : [{ step: 'reachable', status: 'fail', detail: 'connection refused\nmore lines' }],
    ...(passed ? { facts: { os: 'linux', arch: 'x64', cpus: 8, memoryBytes: 2 ** 34, node: { path: '/usr/bin/node', version: '22.1.0' }, gpus: [{ name: 'NVIDIA A100-SXM4-80GB', memoryBytes: 8e10 }], complete: true } } : {}),
  })) as HostPreflight[];
}

/** Store a finished test of the cluster as it is now, as the studio's test and `shoal cluster test` do. */
function tested(name: string, ok: Record<string, boolean>, survey?: SurveyOutcome): void {
  storeClusterTest(findCluster(name)!, results(ok), survey, AT);
}

const measured: SurveyOutcome = {
  file: 'cluster-profiles/lab.json',
  profile: { version: 1, cluster: 'lab', measuredAt: '2026-12-01T09:00:00Z', hosts: ['10.0.0.1', '10.0.0.2'], links: [{ from: '10.0.0.1', to: '10.0.0.2', alpha: 1e-4, beta: 1e9, rttMs: 0.2 }], leftOut: [] },
};

const lastTest = async (name: string) => (await api.listClusters()).clusters.find((c) => c.name === name)?.lastTest;

beforeEach(async () => {
  rmSync(clustersFile(), { force: true });
  await api.addClusterHosts({ cluster: 'lab', hosts: ['alice@10.0.0.1', 'alice@10.0.0.2:2222'] });
});

describe('the stored last connection test', () => {
  it('is read back with the cluster: when, each host ready or why not, what preflight found, the links', async () => {
    expect(await lastTest('lab')).toBeUndefined();
    tested('lab', { '10.0.0.1': true, '10.0.0.2': false }, measured);
    // What a studio started afresh over the same config folder sees.
    expect(await clustersService().listClusters()).toMatchObject({
      clusters: [
        {
          name: 'lab',
          lastTest: {
            at: AT,
            hosts: [
              { host: '10.0.0.1', ok: true, facts: { cpus: 8, gpus: ['NVIDIA A100-SXM4-80GB'], node: '22.1.0' } },
              { host: '10.0.0.2', ok: false, why: 'reachable: connection refused' },
            ],
            untested: [],
            links: { state: 'done', pairs: 1 },
          },
        },
      ],
    });
  });

  it('does not cover a host changed or added since: its verdict is gone, the others keep theirs', async () => {
    tested('lab', { '10.0.0.1': true, '10.0.0.2': true }, { skipped: 'it needs two hosts that pass preflight, and 1 did.' });
    expect((await lastTest('lab'))?.links).toEqual({ state: 'skipped', detail: 'it needs two hosts that pass preflight, and 1 did.' });
    await api.editClusterHost({ cluster: 'lab', host: '10.0.0.2', address: 'alice@10.0.0.3' });
    await api.addClusterHosts({ cluster: 'lab', hosts: ['alice@10.0.0.4'] });
    const test = await lastTest('lab');
    expect(test?.hosts.map((h) => [h.host, h.ok])).toEqual([['10.0.0.1', true]]);
    expect(test?.untested).toEqual(['10.0.0.3', '10.0.0.4']);
  });

  it('does not cover a host whose key, user or jump chain changed, even under the same name', async () => {
    tested('lab', { '10.0.0.1': true, '10.0.0.2': true });
    await api.editClusterHost({ cluster: 'lab', host: '10.0.0.1', address: 'bob@10.0.0.1' });
    await api.editClusterHost({ cluster: 'lab', host: '10.0.0.2', address: 'alice@10.0.0.2:2222', jump: 'carol@bastion' });
    expect((await lastTest('lab'))?.untested).toEqual(['10.0.0.1', '10.0.0.2']);
    expect((await lastTest('lab'))?.hosts).toEqual([]);
  });

  it('follows a rename, goes with a removed host and a removed cluster, and is replaced by the next test', async () => {
    tested('lab', { '10.0.0.1': false, '10.0.0.2': true });
    await api.renameCluster({ cluster: 'lab', to: 'lab2' });
    expect((await lastTest('lab2'))?.hosts).toHaveLength(2);
    await api.removeClusterHost({ cluster: 'lab2', host: '10.0.0.1' });
    expect((await lastTest('lab2'))?.hosts.map((h) => h.host)).toEqual(['10.0.0.2']);
    saveClusterTest('lab2', testRecord(findCluster('lab2')!.hosts, results({ '10.0.0.2': false }), undefined, AT + 1000));
    expect(await lastTest('lab2')).toMatchObject({ at: AT + 1000, hosts: [{ host: '10.0.0.2', ok: false }] });
    await api.removeCluster('lab2');
    expect(loadClusters()).toEqual([]);
  });

  it('is dropped for a cluster that is no longer stored, and a bad record in the file is named', async () => {
    saveClusterTest('gone', testRecord([], [], undefined, AT));
    expect(loadClusters().map((c) => c.name)).toEqual(['lab']);
    const file = JSON.parse(readFileSync(clustersFile(), 'utf8'));
    file.clusters[0].lastTest = { at: 'yesterday', hosts: [] };
    writeFileSync(clustersFile(), JSON.stringify(file));
    expect(() => loadClusters()).toThrow(/clusters\.json.*: clusters\.0\.lastTest\.at: .*Fix or move the file/);
  });
});

describe('cluster settings from the studio', () => {
  it('are set as a whole: what is left out is cleared', async () => {
    await api.setClusterSettings({ cluster: 'lab', remoteDir: '/scratch/shoal/', setup: ['module load cuda'], env: { OMP_NUM_THREADS: '4' } });
    expect((await api.listClusters()).clusters[0].settings).toEqual({ remoteDir: '/scratch/shoal', setup: ['module load cuda'], env: { OMP_NUM_THREADS: '4' } });
    await api.setClusterSettings({ cluster: 'lab', env: { A: '1' } });
    expect((await api.listClusters()).clusters[0].settings).toEqual({ env: { A: '1' } });
    await expect(api.setClusterSettings({ cluster: 'lab', env: { HOME: '/x' } })).rejects.toThrow('env.HOME: SHOAL_*, NODE_PATH and HOME are set by Shoal');
    await expect(api.setClusterSettings({ cluster: 'nope' })).rejects.toThrow('No cluster "nope"');
  });
});

describe('testedAgo', () => {
  it('says the largest whole unit', () => {
    const now = AT + 3 * 3_600_000 + 59 * 60_000;
    expect(testedAgo(now - 20_000, now)).toBe('tested just now');
    expect(testedAgo(now + 5_000, now)).toBe('tested just now');
    expect(testedAgo(now - 59 * 60_000, now)).toBe('tested 59 min ago');
    expect(testedAgo(AT, now)).toBe('tested 3 h ago');
    expect(testedAgo(now - 3 * 86_400_000, now)).toBe('tested 3 days ago');
  });
});
