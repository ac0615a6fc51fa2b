import { chmodSync, mkdtempSync, rmSync, statSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { formatBandwidth, formatLatency, formatLinkMatrix, linkMatrix } from '../../engine/cluster/linkMatrix.js';
import { ClusterLinkProfileSchema, type ClusterLinkProfile } from '../../engine/cluster/linkProfile.js';
import { measuredHostLinks, withMeasuredLinks } from '../../engine/cluster/measuredLinks.js';
import { parseClusterSpec } from '../../engine/cluster/parseClusterSpec.js';
import { linkBetween } from '../../engine/cluster/topology.js';
import { costOfPlan } from '../../engine/cost/costOfPlan.js';
import { zooModel } from '../../engine/model/zoo.js';
import { presetPlan } from '../../engine/plan/presets.js';
import { clusterProfileFile, loadClusterProfile, saveClusterProfile } from '../../engine/node/hosts/clusterProfile.js';

/** A survey of three hosts where a–c is slow (a congested uplink) and the two others are fast. */
const profile: ClusterLinkProfile = {
  version: 1,
  cluster: 'lab',
  measuredAt: '2026-11-29T12:00:00.000Z',
  hosts: ['a', 'b', 'c'],
  links: [
    { from: 'a', to: 'b', alpha: 40e-6, beta: 1.2e9, rttMs: 0.08 },
    { from: 'a', to: 'c', alpha: 2e-3, beta: 5e7, rttMs: 4 },
    { from: 'b', to: 'c', alpha: 50e-6, beta: 1e9, rttMs: 0.1 },
  ],
  leftOut: [{ host: 'd', reason: 'failed preflight: node: v18 is too old' }],
};

const spec = parseClusterSpec({
  name: 'lab',
  hosts: ['a', 'b', 'c'].map((name) => ({ name, devices: [{ preset: 'cpu-core', count: 1 }] })),
  links: { interHost: { alpha: 25e-6, beta: 1.25e9 } },
});

describe('measured links for the cost model', () => {
  it('turns each measured pair into a host-pair link, the median into the inter-host default', () => {
    const links = measuredHostLinks({ ...profile, links: [...profile.links, { from: 'b', to: 'a', alpha: 30e-6, beta: 1.1e9, rttMs: 0.06 }] });
    // Both directions of a–b: the best of each (lowest latency, highest bandwidth).
    expect(links.hostPairs.find((p) => p.hosts.join() === 'a,b')?.link).toEqual({ alpha: 30e-6, beta: 1.2e9 });
    expect(links.hostPairs).toHaveLength(3);
    expect(links.interHost).toEqual({ alpha: 50e-6, beta: 1e9 });
  });

  it('withMeasuredLinks replaces the spec links of surveyed pairs only, and the cost model prices with them', () => {
    const measured = withMeasuredLinks(spec, profile);
    expect(linkBetween(measured, 0, 2)).toEqual({ alpha: 2e-3, beta: 5e7 });
    expect(linkBetween(measured, 1, 2)).toEqual({ alpha: 50e-6, beta: 1e9 });
    // The spec's own inter-host link stays the default; the input spec is unchanged.
    expect(measured.interHost).toEqual({ alpha: 25e-6, beta: 1.25e9 });
    expect(linkBetween(spec, 0, 2)).toEqual({ alpha: 25e-6, beta: 1.25e9 });

    // Data parallel over a and c: the slow measured link makes the gradient all-reduce, and the step, slower.
    const model = zooModel('mlp');
    const plan = presetPlan(model, 'pp1-dp2');
    const ac = parseClusterSpec({ name: 'ac', hosts: ['a', 'c'].map((name) => ({ name, devices: [{ preset: 'cpu-core', count: 1 }] })), links: { interHost: { alpha: 25e-6, beta: 1.25e9 } } });
    const slow = costOfPlan(plan, model, withMeasuredLinks(ac, profile));
    const datasheet = costOfPlan(plan, model, ac);
    expect(slow.stepMs).toBeGreaterThan(datasheet.stepMs);
  });

  it('refuses a spec that shares no surveyed pair, naming both sides', () => {
    const other = parseClusterSpec({ name: 'other', hosts: [{ name: 'x', devices: [{ preset: 'cpu-core', count: 2 }], intraLink: { alpha: 1e-5, beta: 1e9 } }] });
    expect(() => withMeasuredLinks(other, profile)).toThrow(/cluster lab \(a, b, c\).*"other" \(x\)/);
  });
});

describe('link matrix', () => {
  it('is symmetric host × host with an empty diagonal', () => {
    const { hosts, cells } = linkMatrix(profile);
    expect(hosts).toEqual(['a', 'b', 'c']);
    expect(cells[0][0]).toBeNull();
    expect(cells[2][0]).toBe(cells[0][2]);
  });

  it('prints GB/s or MB/s and µs or ms', () => {
    expect(formatBandwidth(1.2e9)).toBe('1.20 GB/s');
    expect(formatBandwidth(5e7)).toBe('50.0 MB/s');
    expect(formatLatency(40e-6)).toBe('40 µs');
    expect(formatLatency(2e-3)).toBe('2.00 ms');
    expect(formatLinkMatrix(profile)).toBe(
      [
        '   a                    b                  c',
        'a  —                    1.20 GB/s / 40 µs  50.0 MB/s / 2.00 ms',
        'b  1.20 GB/s / 40 µs    —                  1.00 GB/s / 50 µs',
        'c  50.0 MB/s / 2.00 ms  1.00 GB/s / 50 µs  —',
        '',
      ].join('\n'),
    );
  });
});

describe('stored cluster profile', () => {
  let dir: string;
  let saved: string | undefined;
  beforeEach(() => {
    dir = mkdtempSync(join(tmpdir(), 'shoal-profile-'));
    saved = process.env.SHOAL_CONFIG_DIR;
    process.env.SHOAL_CONFIG_DIR = dir;
  });
  afterEach(() => {
    if (saved === undefined) delete process.env.SHOAL_CONFIG_DIR;
    else process.env.SHOAL_CONFIG_DIR = saved;
    rmSync(dir, { recursive: true, force: true });
  });

  it('is written beside clusters.json with mode 600 and read back', () => {
    const file = saveClusterProfile(profile);
    expect(file).toBe(join(dir, 'cluster-profiles', 'lab.json'));
    expect(statSync(file).mode & 0o777).toBe(0o600);
    expect(loadClusterProfile('lab')).toEqual(profile);
    expect(loadClusterProfile('other')).toBeUndefined();
  });

  it('a damaged file is an error naming it and what to do; a bad name is refused', () => {
    const file = clusterProfileFile('lab');
    saveClusterProfile(profile);
    chmodSync(file, 0o600);
    writeFileSync(file, JSON.stringify({ ...profile, links: [{ from: 'a', to: 'b', alpha: 1e-5, beta: -1, rttMs: 0 }] }));
    expect(() => loadClusterProfile('lab')).toThrow(new RegExp(`${file}: links\\.0\\.beta: .*shoal cluster test lab`));
    expect(() => clusterProfileFile('../x')).toThrow(/not a cluster name/);
    expect(ClusterLinkProfileSchema.safeParse({ ...profile, hosts: ['a'] }).success).toBe(false);
  });
});
