import type { z } from 'zod';
import { LIMITS } from '../plan/limits.js';
import { DEVICE_PRESETS, devicePreset } from './devicePresets.js';
import { ClusterSpecSchema, type ClusterSpec, type Device, type Link } from './spec.js';

/** One thing wrong with a cluster spec: its code, where in the JSON, what, and how to fix it. */
export interface SpecProblem {
  /** cluster-schema, cluster-unknown-field, cluster-too-large, or a rule's own code (duplicate-host, …). */
  code: string;
  path: string;
  message: string;
  hint: string;
}

/** Thrown by parseClusterSpec; its message lists every problem, `problems` keeps them as data. */
export class ClusterSpecError extends Error {
  constructor(readonly problems: SpecProblem[]) {
    const shown = problems.slice(0, LIMITS.diagnosticsShown).map((p) => `${p.path}: ${p.message} Fix: ${p.hint}`);
    if (problems.length > shown.length) shown.push(`… and ${problems.length - shown.length} more not shown.`);
    super(`The cluster spec has ${problems.length} problem${problems.length === 1 ? '' : 's'}:\n  ${shown.join('\n  ')}`);
    this.name = 'ClusterSpecError';
  }
}

/** `hosts[0].devices[1].preset`, the way a person reads a JSON path. */
function jsonPath(path: readonly PropertyKey[]): string {
  const text = path.map((key) => (typeof key === 'number' ? `[${key}]` : `.${String(key)}`)).join('');
  return text.replace(/^\./, '') || '(cluster)';
}

const FIELD_HINTS: Record<string, string> = {
  alpha: 'Give the latency in seconds (≥ 0), e.g. 5e-6 for NVLink or 2.5e-5 for TCP over Ethernet.',
  beta: 'Give the bandwidth in bytes per second (> 0), e.g. 1.3e11 for NVLink or 4.375e9 for 35 Gb/s.',
  memoryBytes: 'Give the device memory in bytes, e.g. 17179869184 for 16 GiB.',
  fp32: 'Give sustained FLOP/s, e.g. 1.26e13 for a V100 in fp32.',
  fp16: 'Give sustained FLOP/s, e.g. 8.75e13 for a V100 with tensor cores.',
  bf16: 'Give sustained FLOP/s, or leave bf16 out if the device has no fast bf16.',
  count: 'Give a whole number of devices, at least 1.',
  hosts: 'List hosts as { "name": "node-1", "devices": [{ "preset": "v100-16gb", "count": 8 }] }.',
  devices: 'List at least one device, e.g. { "preset": "v100-16gb", "count": 8 }.',
};

/** What a cluster file holds, for a file that holds something else altogether ([], {}, a number). */
const CLUSTER_SHAPE = 'A cluster file holds one object with a "name" and its "hosts", e.g. { "name": "lab", "hosts": [{ "name": "node-1", "devices": [{ "preset": "v100-16gb", "count": 8 }] }] }, and "links" between hosts when there are several (examples/clusters/ has whole files).';

function schemaProblems(error: z.ZodError, input: unknown): SpecProblem[] {
  const isEmpty = input === null || typeof input !== 'object' || Array.isArray(input) || Object.keys(input).length === 0;
  if (isEmpty) return [{ code: 'cluster-schema', path: '(cluster)', message: `The file holds ${Array.isArray(input) ? (input.length ? 'a list' : 'an empty list []') : input === null || typeof input !== 'object' ? `${JSON.stringify(input)}` : 'an empty object {}'}, not a cluster.`, hint: CLUSTER_SHAPE }];
  return error.issues.slice(0, LIMITS.findingsKept).map((issue) => {
    if (issue.code === 'unrecognized_keys') {
      return { code: 'cluster-unknown-field', path: jsonPath(issue.path), message: `Unknown field${issue.keys.length > 1 ? 's' : ''} ${issue.keys.map((k) => `"${k}"`).join(', ')}.`, hint: 'Remove it or check its spelling.' };
    }
    const field = [...issue.path].reverse().find((k) => typeof k === 'string');
    const hint = (typeof field === 'string' && FIELD_HINTS[field]) || 'Compare with the examples in examples/clusters/.';
    const tooBig = issue.code === 'too_big' ? ` Shoal describes at most ${LIMITS.devices} devices in one cluster.` : '';
    return { code: issue.code === 'too_big' ? 'cluster-too-large' : 'cluster-schema', path: jsonPath(issue.path), message: `${issue.message}.${tooBig}`, hint };
  });
}

const PRESET_LIST = Object.keys(DEVICE_PRESETS).join(', ');

/**
 * Check cluster JSON and resolve it: presets expanded, devices numbered globally host by host, links
 * checked so that every pair of devices has one. Throws a ClusterSpecError listing every problem.
 */
export function parseClusterSpec(input: unknown): ClusterSpec {
  const tooLarge = sizeProblem(input);
  if (tooLarge) throw new ClusterSpecError([tooLarge]);
  const parsed = ClusterSpecSchema.safeParse(input);
  if (!parsed.success) throw new ClusterSpecError(schemaProblems(parsed.error, input));
  const json = parsed.data;
  // Every count is at most LIMITS.devices, but a thousand hosts of that many are not: sum before expanding.
  const total = json.hosts.reduce((n, host) => n + host.devices.reduce((m, e) => m + e.count, 0), 0);
  if (total > LIMITS.devices) {
    throw new ClusterSpecError([{ code: 'cluster-too-large', path: 'hosts', message: `The cluster has ${total} devices in all; Shoal describes at most ${LIMITS.devices}.`, hint: `Describe at most ${LIMITS.devices} devices (lower the counts).` }]);
  }
  const problems: SpecProblem[] = [];
  const problem = (path: string, message: string, hint: string, code = 'cluster-invalid') => problems.push({ code, path, message, hint });

  const hostNames = new Set<string>();
  const devices: Device[] = [];
  const hosts = json.hosts.map((host, h) => {
    if (hostNames.has(host.name)) problem(`hosts[${h}].name`, `Host name "${host.name}" is used twice.`, 'Give every host a unique name.', 'duplicate-host');
    hostNames.add(host.name);
    const indices: number[] = [];
    host.devices.forEach((entry, d) => {
      const path = `hosts[${h}].devices[${d}]`;
      const preset = entry.preset === undefined ? undefined : devicePreset(entry.preset);
      if (entry.preset !== undefined && !preset) {
        problem(`${path}.preset`, `Unknown device preset "${entry.preset}".`, `Use one of ${PRESET_LIST}, or describe the device with name, memoryBytes and flops.fp32.`, 'unknown-preset');
        return;
      }
      const model = entry.name ?? preset?.model;
      const memoryBytes = entry.memoryBytes ?? preset?.memoryBytes;
      const fp32 = entry.flops?.fp32 ?? preset?.flops.fp32;
      if (model === undefined || memoryBytes === undefined || fp32 === undefined) {
        const absent = [model === undefined && 'name', memoryBytes === undefined && 'memoryBytes', fp32 === undefined && 'flops.fp32'].filter((f) => f !== false);
        const missing = absent.length > 1 ? `${absent.slice(0, -1).join(', ')} and ${absent[absent.length - 1]}` : absent[0];
        problem(path, `A device without a preset needs ${missing}.`, `Add ${missing}, or use a preset such as "v100-16gb" (known: ${PRESET_LIST}).`, 'device-incomplete');
        return;
      }
      const fp16 = entry.flops?.fp16 ?? preset?.flops.fp16;
      const bf16 = entry.flops?.bf16 ?? preset?.flops.bf16;
      const flops = { fp32, ...(fp16 !== undefined ? { fp16 } : {}), ...(bf16 !== undefined ? { bf16 } : {}) };
      for (let c = 0; c < entry.count; c++) {
        indices.push(devices.length);
        devices.push({ index: devices.length, host: host.name, hostIndex: h, model, ...(entry.preset !== undefined ? { preset: entry.preset } : {}), memoryBytes, flops });
      }
    });
    const intraLink: Link | undefined = stripNote(host.intraLink ?? json.links.intraHost);
    if (!intraLink && host.devices.reduce((n, e) => n + e.count, 0) > 1) {
      problem(`hosts[${h}].intraLink`, `Host "${host.name}" has several devices but no link between them.`, 'Add links.intraHost (a default for every host) or this host\'s intraLink, e.g. { "alpha": 5e-6, "beta": 1.3e11 } for NVLink.', 'missing-link');
    }
    return { name: host.name, ...(host.address !== undefined ? { address: host.address } : {}), devices: indices, ...(intraLink ? { intraLink } : {}) };
  });

  if (json.hosts.length > 1 && !json.links.interHost) {
    problem('links.interHost', 'The cluster has several hosts but no link between them.', 'Add links.interHost, e.g. { "alpha": 2.5e-5, "beta": 4.375e9 } for 35 Gb/s Ethernet.', 'missing-link');
  }
  const seenPairs = new Set<string>();
  json.links.hostPairs.forEach((pair, k) => {
    pair.hosts.forEach((name, m) => {
      if (!hostNames.has(name)) problem(`links.hostPairs[${k}].hosts[${m}]`, `Host "${name}" is not in the cluster.`, `Name one of the hosts: ${[...hostNames].join(', ')}.`, 'unknown-host');
    });
    if (pair.hosts[0] === pair.hosts[1]) problem(`links.hostPairs[${k}].hosts`, `The pair names host "${pair.hosts[0]}" twice.`, "Use the host's intraLink for links inside one host.", 'pair-same-host');
    const key = [...pair.hosts].sort().join('\u0000');
    if (seenPairs.has(key)) problem(`links.hostPairs[${k}]`, `Hosts ${pair.hosts.join(' and ')} have two link overrides.`, 'Keep one entry per host pair.', 'duplicate-pair');
    seenPairs.add(key);
  });
  if (problems.length) throw new ClusterSpecError(problems);

  return {
    name: json.name,
    hosts,
    devices,
    ...(json.links.interHost ? { interHost: stripNote(json.links.interHost) } : {}),
    hostPairs: json.links.hostPairs.map((p) => ({ hosts: p.hosts, link: { alpha: p.alpha, beta: p.beta } })),
  };
}

/** Lists longer than any cluster, refused before the schema builds an issue per element. */
function sizeProblem(input: unknown): SpecProblem | undefined {
  const hosts = typeof input === 'object' && input !== null ? (input as { hosts?: unknown }).hosts : undefined;
  if (!Array.isArray(hosts)) return undefined;
  if (hosts.length > LIMITS.devices) return { code: 'cluster-too-large', path: 'hosts', message: `The cluster lists ${hosts.length} hosts; Shoal describes at most ${LIMITS.devices} devices.`, hint: 'Describe fewer hosts.' };
  const entries = hosts.reduce((n: number, h: unknown) => n + (typeof h === 'object' && h !== null && Array.isArray((h as { devices?: unknown }).devices) ? (h as { devices: unknown[] }).devices.length : 0), 0);
  if (entries > LIMITS.devices) return { code: 'cluster-too-large', path: 'hosts', message: `The hosts list ${entries} device entries; Shoal describes at most ${LIMITS.devices} devices.`, hint: 'Describe fewer devices, or use "count" for identical ones.' };
  return undefined;
}

function stripNote(link: (Link & { note?: string }) | undefined): Link | undefined {
  return link ? { alpha: link.alpha, beta: link.beta } : undefined;
}
