import { describe, expect, it } from 'vitest';
import { gpuPreset, storedClusterSpec } from '../../engine/cluster/storedClusterSpec.js';

/** A stored SSH cluster priced before a deploy: devices from the last test's facts, links from the survey. */
describe('stored cluster as a ClusterSpec', () => {
  it('reads GPU names as nvidia-smi gives them', () => {
    expect(gpuPreset('NVIDIA A100-SXM4-80GB')).toBe('a100-80gb');
    expect(gpuPreset('Tesla V100-SXM2-16GB')).toBe('v100-16gb');
    expect(gpuPreset('NVIDIA GeForce RTX 4090')).toBe('rtx-4090');
    expect(gpuPreset('Tesla T4')).toBe('t4');
    expect(gpuPreset('NVIDIA H100 80GB HBM3')).toBe('h100-80gb');
    expect(gpuPreset('Some Accelerator 9000')).toBeUndefined();
  });

  it('a tested host gives a device per core or per GPU; an untested one one core, and says so', () => {
    const { spec, assumed } = storedClusterSpec({ name: 'lab', hosts: [{ alias: 'a' }, { alias: 'b' }, { alias: 'c' }] }, { a: { cpus: 4, gpus: [] }, b: { cpus: 32, gpus: ['NVIDIA A100-SXM4-80GB', 'NVIDIA A100-SXM4-80GB'] } });
    expect(spec.hosts.map((h) => h.name)).toEqual(['a', 'b', 'c']);
    expect(spec.devices.map((d) => d.host)).toEqual(['a', 'a', 'a', 'a', 'b', 'b', 'c']);
    expect(spec.devices.map((d) => d.preset)).toEqual(['cpu-core', 'cpu-core', 'cpu-core', 'cpu-core', 'a100-80gb', 'a100-80gb', 'cpu-core']);
    expect(spec.devices[4].memoryBytes).toBe(80 * 2 ** 30);
    expect(assumed).toEqual(['c not measured by a passing test: 1 CPU core each', 'links between hosts not measured: 1 Gb/s Ethernet']);
  });

  it('takes the surveyed links between hosts', () => {
    const links = { version: 1 as const, cluster: 'lab', measuredAt: '2026-01-01T00:00:00Z', hosts: ['a', 'b'], links: [{ from: 'a', to: 'b', alpha: 2e-4, beta: 5e8, rttMs: 0.4 }], leftOut: [] };
    const { spec, assumed } = storedClusterSpec({ name: 'lab', hosts: [{ alias: 'a' }, { alias: 'b' }], links }, { a: { cpus: 2, gpus: [] }, b: { cpus: 2, gpus: [] } });
    expect(assumed).toEqual([]);
    expect(spec.hostPairs).toEqual([{ hosts: ['a', 'b'], link: { alpha: 2e-4, beta: 5e8 } }]);
    expect(() => storedClusterSpec({ name: 'empty', hosts: [] }, {})).toThrow('Cluster empty has no hosts');
  });
});
