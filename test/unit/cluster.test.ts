import { readdirSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { localClusterSpec, parseClusterName } from '../../engine/cluster/cluster.js';
import { DEVICE_PRESETS } from '../../engine/cluster/devicePresets.js';
import { ClusterSpecError, parseClusterSpec } from '../../engine/cluster/parseClusterSpec.js';
import { devicesOf, linkBetween } from '../../engine/cluster/topology.js';

const examples = join(__dirname, '..', '..', 'examples', 'clusters');
const example = (name: string) => parseClusterSpec(JSON.parse(readFileSync(join(examples, name), 'utf8')));

/** The problems parseClusterSpec reports for `input`, as data. */
function problemsOf(input: unknown) {
  try {
    parseClusterSpec(input);
  } catch (error) {
    expect(error).toBeInstanceOf(ClusterSpecError);
    return (error as ClusterSpecError).problems;
  }
  throw new Error('expected the spec to be rejected');
}

const host = (name: string, devices: unknown[] = [{ preset: 'v100-16gb' }], extra: object = {}) => ({ name, devices, ...extra });
const NVLINK = { alpha: 5e-6, beta: 1.3e11 };
const ETHERNET = { alpha: 2.5e-5, beta: 4.375e9 };

describe('example clusters', () => {
  it('every file in examples/clusters parses', () => {
    const files = readdirSync(examples).filter((f) => f.endsWith('.json'));
    expect(files).toEqual(expect.arrayContaining(['whale-64xv100.json', 'hetero-v100-t4.json', 'dgx-a100-2x8.json', 'local-4.json']));
    for (const file of files) expect(() => example(file), file).not.toThrow();
  });

  it("whale-64xv100 is Whale's testbed: 8 hosts × 8 V100-16GB, NVLink inside, 35 Gb/s between", () => {
    const whale = example('whale-64xv100.json');
    expect(whale.hosts).toHaveLength(8);
    expect(devicesOf(whale)).toHaveLength(64);
    expect(new Set(whale.devices.map((d) => d.preset))).toEqual(new Set(['v100-16gb']));
    expect(devicesOf(whale, 'v100-node-2').map((d) => d.index)).toEqual([8, 9, 10, 11, 12, 13, 14, 15]);
    expect(linkBetween(whale, 0, 7)).toEqual(NVLINK);
    expect(linkBetween(whale, 7, 8).beta).toBe(35e9 / 8);
    expect(linkBetween(whale, 5, 5)).toEqual({ alpha: 0, beta: Infinity });
  });

  it('hetero-v100-t4 mixes device kinds and overrides one host pair', () => {
    const hetero = example('hetero-v100-t4.json');
    expect(hetero.devices.map((d) => d.preset)).toEqual([...Array(8).fill('v100-16gb'), ...Array(8).fill('t4')]);
    expect(hetero.devices[0].flops.fp32).toBeGreaterThan(hetero.devices[8].flops.fp32);
    expect(linkBetween(hetero, 8, 12).beta).toBe(6.25e9); // t4-a ↔ t4-b: the pair override
    expect(linkBetween(hetero, 12, 8).beta).toBe(6.25e9);
    expect(linkBetween(hetero, 0, 8).beta).toBe(3.125e9); // v100-a ↔ t4-a: the inter-host default
    expect(linkBetween(hetero, 8, 9).beta).toBe(1.2e10); // PCIe inside t4-a
  });

  it('local-4.json is the same cluster as local:4', () => {
    expect(example('local-4.json')).toEqual(localClusterSpec(4));
    expect(parseClusterName('local:4', 2).spec).toEqual(localClusterSpec(4));
  });
});

describe('local clusters', () => {
  it('"This machine" is N cpu-core devices on localhost with a loopback link', () => {
    const local = localClusterSpec(3);
    expect(local.hosts.map((h) => h.name)).toEqual(['localhost']);
    expect(local.devices.map((d) => [d.index, d.host, d.preset])).toEqual([0, 1, 2].map((i) => [i, 'localhost', 'cpu-core']));
    expect(linkBetween(local, 0, 2)).toEqual({ alpha: 75e-6, beta: 2e9 });
    expect(local.interHost).toBeUndefined();
  });

  it('parseClusterName keeps local and local:N', () => {
    expect(parseClusterName('local', 2)).toMatchObject({ kind: 'local', name: 'This machine', agents: 2 });
    expect(parseClusterName(' local:5 ', 2).agents).toBe(5);
    expect(() => parseClusterName('gpu-farm', 2)).toThrow(/local:N/);
    expect(() => localClusterSpec(0)).toThrow(/at least 1/);
  });

  it('linkBetween refuses a device the cluster does not have', () => {
    expect(() => linkBetween(localClusterSpec(2), 0, 2)).toThrow(/devices 0–1; there is no device 2/);
  });
});

describe('device presets', () => {
  it('every preset has memory and sustained fp32 below its half-precision rate', () => {
    for (const [id, preset] of Object.entries(DEVICE_PRESETS)) {
      expect(preset.memoryBytes, id).toBeGreaterThan(2 ** 30);
      expect(preset.flops.fp32, id).toBeGreaterThan(1e9);
      if (preset.flops.fp16 !== undefined) expect(preset.flops.fp16, id).toBeGreaterThan(preset.flops.fp32);
    }
    expect(Object.keys(DEVICE_PRESETS)).toEqual(['v100-16gb', 'v100-32gb', 'a100-40gb', 'a100-80gb', 'h100-80gb', 'h200-141gb', 'rtx-3090', 'rtx-4090', 't4', 'cpu-core']);
    expect(DEVICE_PRESETS['v100-16gb'].flops.fp32).toBeCloseTo(0.8 * 15.7e12, -6);
    expect(DEVICE_PRESETS['h200-141gb'].memoryBytes).toBe(141 * 2 ** 30);
  });

  it('a preset entry may override fields, e.g. with measured flops', () => {
    const spec = parseClusterSpec({ name: 'm', hosts: [host('a', [{ preset: 'rtx-4090', flops: { fp32: 5e13 } }])] });
    expect(spec.devices[0]).toMatchObject({ model: 'GeForce RTX 4090', preset: 'rtx-4090', flops: { fp32: 5e13, fp16: DEVICE_PRESETS['rtx-4090'].flops.fp16 } });
  });

  it('a device may be described in full without a preset', () => {
    const spec = parseClusterSpec({ name: 'm', hosts: [host('a', [{ name: 'MI250X', memoryBytes: 64 * 2 ** 30, flops: { fp32: 3e13 }, count: 2 }])], links: { intraHost: NVLINK } });
    expect(spec.devices.map((d) => [d.model, d.flops.fp32])).toEqual([['MI250X', 3e13], ['MI250X', 3e13]]);
    expect(spec.devices[0].preset).toBeUndefined();
  });
});

describe('parseClusterSpec errors', () => {
  it('lists every problem with its JSON path and a fix hint in one message', () => {
    const bad = { name: 'x', hosts: [host('a', [{ preset: 'v100-16gb', count: 0 }]), { name: 'b', devices: [{ preset: 'v100-16gb' }], links: {} }], links: { interHost: { alpha: 1e-5, beta: '35Gb/s' } } };
    expect(() => parseClusterSpec(bad)).toThrow(/3 problems[\s\S]*hosts\[0\]\.devices\[0\]\.count[\s\S]*hosts\[1\][\s\S]*links\.interHost\.beta/);
    const problems = problemsOf(bad);
    expect(problems.map((p) => p.path)).toEqual(['hosts[0].devices[0].count', 'hosts[1]', 'links.interHost.beta']);
    expect(problems[0].hint).toMatch(/whole number/);
    expect(problems[1].message).toMatch(/Unknown field "links"/);
    expect(problems[2].hint).toMatch(/bytes per second/);
  });

  it('reports semantic problems: presets, incomplete devices, duplicate hosts, missing links, bad host pairs', () => {
    const problems = problemsOf({
      name: 'x',
      hosts: [host('a', [{ preset: 'v100' }]), host('a', [{ name: 'mystery', count: 2 }]), host('c')],
      links: { hostPairs: [{ hosts: ['a', 'zz'], ...ETHERNET }, { hosts: ['c', 'c'], ...ETHERNET }, { hosts: ['zz', 'a'], ...ETHERNET }] },
    });
    const byPath = Object.fromEntries(problems.map((p) => [p.path, p]));
    expect(byPath['hosts[0].devices[0].preset'].hint).toMatch(/v100-16gb/);
    expect(byPath['hosts[1].name'].message).toMatch(/used twice/);
    expect(byPath['hosts[1].devices[0]'].message).toMatch(/needs memoryBytes and flops\.fp32/);
    expect(byPath['hosts[1].intraLink'].hint).toMatch(/links\.intraHost/);
    expect(byPath['links.interHost'].hint).toMatch(/interHost/);
    expect(byPath['links.hostPairs[0].hosts[1]'].message).toMatch(/"zz" is not in the cluster/);
    expect(byPath['links.hostPairs[1].hosts'].message).toMatch(/twice/);
    expect(byPath['links.hostPairs[2]'].message).toMatch(/two link overrides/);
    for (const p of problems) expect(p.hint.length).toBeGreaterThan(10);
  });

  it('rejects input that is not a cluster at all', () => {
    expect(problemsOf(42)[0]).toMatchObject({ path: '(cluster)' });
    expect(problemsOf({ name: 'x', hosts: [] })[0]).toMatchObject({ path: 'hosts', hint: expect.stringMatching(/List hosts/) });
  });
});
