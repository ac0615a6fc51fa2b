import { existsSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { beforeEach, describe, expect, it } from 'vitest';
import { runClusterCommand } from '../../engine/node/commands/cluster.js';
import { clusterProfileFile, saveClusterProfile } from '../../engine/node/hosts/clusterProfile.js';
import { loadClusters } from '../../engine/node/hosts/clusterStore.js';
import { useTempConfigDir } from '../support/configDir.js';

/**
 * `shoal cluster rename|remove|edit` (and the studio's Cluster view, which calls the same functions in
 * hosts/clusterEdits.ts) against a real clusters.json and link profile in a temporary config folder.
 */
const config = useTempConfigDir('shoal-cluster-edits-');

async function shoal(...args: string[]): Promise<{ code: number; out: string; err: string }> {
  let out = '';
  let err = '';
  const code = await runClusterCommand(args, { out: (t) => (out += t), err: (t) => (err += t), interactive: false });
  return { code, out, err };
}

const profile = (cluster: string) => ({ version: 1 as const, cluster, measuredAt: '2026-01-01T00:00:00Z', hosts: ['10.0.0.1', '10.0.0.2'], links: [{ from: '10.0.0.1', to: '10.0.0.2', alpha: 1e-4, beta: 1e9, rttMs: 0.2 }], leftOut: [] });

beforeEach(async () => {
  rmSync(join(config, 'clusters.json'), { force: true });
  rmSync(join(config, 'cluster-profiles'), { recursive: true, force: true });
  expect((await shoal('add', 'lab', '--host', 'alice@10.0.0.1', '--host', 'alice@10.0.0.2:2222', '--jump', 'bob@bastion')).code).toBe(0);
  saveClusterProfile(profile('lab'));
});

describe('shoal cluster rename | remove | edit', () => {
  it('renames a cluster; its measured links follow; a taken name is refused', async () => {
    await shoal('add', 'other', '--host', 'carol@10.0.0.9');
    expect((await shoal('rename', 'lab', 'other')).err).toContain('A cluster "other" exists already');
    const renamed = await shoal('rename', 'lab', 'lab2');
    expect(renamed).toMatchObject({ code: 0, out: 'Cluster lab is now lab2.\n' });
    expect(loadClusters().map((c) => c.name)).toEqual(['lab2', 'other']);
    expect(existsSync(clusterProfileFile('lab'))).toBe(false);
    expect(JSON.parse(readFileSync(clusterProfileFile('lab2'), 'utf8')).cluster).toBe('lab2');
    expect((await shoal('rename', 'nope', 'x')).err).toContain('No cluster "nope"');
    expect((await shoal('rename', 'lab2', 'bad name')).code).toBe(2);
  });

  it('edits a host: kept what is not given, cleared by an empty value; a moved host drops the measured links', async () => {
    const keyFile = join(config, 'id_test');
    writeFileSync(keyFile, 'not a real key', { mode: 0o600 });
    const edited = await shoal('edit', 'lab', '--host', '10.0.0.2', '--address', 'alice@10.0.0.2:2222', '--identity', keyFile);
    expect(edited.code, edited.err).toBe(0);
    let host = loadClusters()[0].hosts[1];
    expect(host).toMatchObject({ alias: '10.0.0.2', identityFiles: [keyFile], jump: [expect.objectContaining({ address: 'bastion', user: 'bob' })] });
    // Same address: the measured links still describe it.
    expect(existsSync(clusterProfileFile('lab'))).toBe(true);
    expect((await shoal('edit', 'lab', '--host', '10.0.0.2', '--address', 'dave@10.0.0.3', '--jump', '')).code).toBe(0);
    host = loadClusters()[0].hosts[1];
    expect(host).toMatchObject({ alias: '10.0.0.3', address: '10.0.0.3', port: 22, user: 'dave', identityFiles: [keyFile], jump: [] });
    expect(existsSync(clusterProfileFile('lab'))).toBe(false);
  });

  it('refuses bad edits with the form\'s messages, naming the option', async () => {
    expect((await shoal('edit', 'lab', '--host', '10.0.0.2', '--address', 'alice@10.0.0.2:99999')).err).toContain('--address: "alice@10.0.0.2:99999": port 99999 is not between 1 and 65535');
    expect((await shoal('edit', 'lab', '--host', 'nope', '--address', 'a@b')).err).toContain('Cluster lab has no host "nope". Its hosts: 10.0.0.1, 10.0.0.2.');
    expect((await shoal('edit', 'lab', '--host', '10.0.0.2', '--address', 'a@b', '--identity', join(config, 'missing'))).err).toContain('does not exist');
    expect((await shoal('edit', 'lab', '--host', '10.0.0.2', '--address', 'alice@10.0.0.1')).err).toContain('has another host called "10.0.0.1"');
    expect((await shoal('edit', 'lab', '--address', 'a@b')).code).toBe(2);
    expect(loadClusters()[0].hosts[1]).toMatchObject({ address: '10.0.0.2', port: 2222 });
  });

  it('removes hosts, and the cluster with its last host; removes a cluster with its links', async () => {
    const one = await shoal('remove', 'lab', '--host', '10.0.0.1');
    expect(one).toMatchObject({ code: 0, out: 'Host 10.0.0.1 removed from lab.\n' });
    expect(loadClusters()[0].hosts.map((h) => h.alias)).toEqual(['10.0.0.2']);
    const last = await shoal('remove', 'lab', '--host', '10.0.0.2');
    expect(last.out).toContain('It was the last one: cluster lab is removed.');
    expect(loadClusters()).toEqual([]);
    expect(existsSync(clusterProfileFile('lab'))).toBe(false);

    await shoal('add', 'lab', '--host', 'alice@10.0.0.1');
    saveClusterProfile(profile('lab'));
    expect((await shoal('remove', 'lab')).out).toBe('Cluster lab removed (with its measured links).\n');
    expect(loadClusters()).toEqual([]);
    expect(existsSync(clusterProfileFile('lab'))).toBe(false);
    expect((await shoal('remove', 'lab')).err).toContain('No cluster "lab"');
  });
});
