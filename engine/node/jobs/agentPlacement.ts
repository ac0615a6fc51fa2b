import { parseClusterSpec } from '../../cluster/parseClusterSpec.js';
import type { GpuFact } from '../../cluster/nvidiaSmi.js';
import { costOfPlan } from '../../cost/costOfPlan.js';
import type { ModelGraph } from '../../model/graph.js';
import { placements } from '../../plan/placement.js';
import type { Plan } from '../../plan/plan.js';
import type { LaunchTarget, PreparedTarget } from '../deploy/launcher.js';

/**
 * Which agent process holds which rank, on which host and GPU. The plan's device indices are the
 * ClusterSpec's: hosts in the cluster's order, each host's devices in turn — a GPU host's GPUs in
 * nvidia-smi's index order, a CPU host's cores. Agent `agent-r` starts on rank r's device and says
 * so when it joins (AgentConfig.slot), so the coordinator gives it rank r whatever order agents join
 * in. Without GPUs and without devices in the plan, agents go round-robin over the hosts, head first:
 * a CPU host's cores are one pool, and every host of the cluster takes part.
 */
export interface AgentSlot {
  /** The rank the agent is started for; spares beyond the plan's ranks get the next numbers. */
  slot: number;
  target: LaunchTarget;
  /** The one GPU it sees (CUDA_VISIBLE_DEVICES), if any. */
  gpu?: GpuFact;
  /** Its own environment: the device it is pinned to, memory growth, the backend it must load. */
  env: Record<string, string>;
}

interface HostDevices {
  target: LaunchTarget;
  gpus: GpuFact[];
  cpus: number;
}

/** The default inter-host link before a link survey (storedClusterSpec.ts): 1 Gb/s Ethernet, 100 µs. */
const ETHERNET = { alpha: 100e-6, beta: 1.25e8 };
/** Inside a host: loopback Node-to-Node TCP, which is how agents on one host exchange tensors. */
const LOOPBACK = { alpha: 75e-6, beta: 2e9 };

export function placeAgentSlots(plan: Plan, agents: number, targets: readonly LaunchTarget[], prepared: readonly PreparedTarget[]): AgentSlot[] {
  const hosts: HostDevices[] = targets.map((target) => {
    const p = prepared.find((x) => x.target === target.alias);
    return { target, gpus: [...(p?.gpus ?? [])].sort((a, b) => a.index - b.index), cpus: Math.max(1, p?.cpus ?? 1) };
  });
  const explicit = plan.stages.some((s) => s.devices !== undefined);
  if (!explicit && hosts.every((h) => h.gpus.length === 0)) {
    return Array.from({ length: agents }, (_, i) => ({ slot: i, target: targets[i % targets.length], env: {} }));
  }
  const table = deviceTable(hosts);
  const fallback = new Set(prepared.filter((p) => p.cpuFallback).map((p) => p.target));
  const used = new Set<number>();
  const slots: AgentSlot[] = placements(plan).map((p) => {
    const device = table[p.device];
    if (!device) throw new Error(`${describeRank(plan, p)} is on device ${p.device}, but the cluster has ${table.length} devices (${describeTable(hosts)}): give the stage devices below ${table.length} (plan stages[${p.stage}].devices), or use a larger cluster.`);
    if (device.gpu && used.has(p.device)) throw new Error(`${describeRank(plan, p)} is on device ${p.device} (${device.host.target.alias} GPU ${device.gpu.index}), which another rank holds already: one agent per GPU, give each rank a device of its own.`);
    used.add(p.device);
    return slotOn(p.rank, device, fallback);
  });
  // Spare agents (an elastic plan's) take the devices no rank holds, then share the hosts round-robin.
  const free = table.map((d, i) => ({ d, i })).filter(({ d, i }) => !used.has(i) && d.gpu);
  for (let slot = slots.length; slot < agents; slot++) {
    const next = free.shift();
    slots.push(next ? slotOn(slot, next.d, fallback) : { slot, target: targets[slot % targets.length], env: {} });
  }
  return slots;
}

interface DeviceEntry {
  host: HostDevices;
  gpu?: GpuFact;
}

function deviceTable(hosts: HostDevices[]): DeviceEntry[] {
  return hosts.flatMap((host) => (host.gpus.length > 0 ? host.gpus.map((gpu) => ({ host, gpu })) : Array.from({ length: host.cpus }, () => ({ host }))));
}

function slotOn(slot: number, device: DeviceEntry, fallback: ReadonlySet<string>): AgentSlot {
  if (!device.gpu) return { slot, target: device.host.target, env: {} };
  return {
    slot,
    target: device.host.target,
    gpu: device.gpu,
    env: {
      // Native TensorFlow takes every GPU it sees and most of each one's memory: one GPU, grown as needed.
      CUDA_VISIBLE_DEVICES: String(device.gpu.index),
      TF_FORCE_GPU_ALLOW_GROWTH: 'true',
      // A GPU agent that cannot load tfjs-node-gpu fails with the reason, unless the CPU is allowed.
      ...(fallback.has(device.host.target.alias) ? {} : { SHOAL_BACKEND: 'tensorflow-gpu' }),
    },
  };
}

function describeRank(plan: Plan, p: { rank: number; stage: number; replica: number; shard: number }): string {
  return `Rank ${p.rank} (stage ${p.stage}, replica ${p.replica}${plan.stages[p.stage].tensorParallel > 1 ? `, shard ${p.shard}` : ''})`;
}

function describeTable(hosts: HostDevices[]): string {
  return hosts.map((h) => `${h.target.alias}: ${h.gpus.length ? `${h.gpus.length} GPU${h.gpus.length === 1 ? '' : 's'}` : `${h.cpus} CPU core${h.cpus === 1 ? '' : 's'}`}`).join(', ');
}

/**
 * A tensor-parallel group whose shards sit on different hosts sends its per-layer collectives over
 * the link between them (Megatron keeps a group inside one host's NVLink domain). One warning per
 * such group, priced: the bytes its members exchange per step (the cost model's link traffic) and what
 * they take over 1 Gb/s Ethernet against loopback on one host.
 */
export function splitTensorGroupWarnings(plan: Plan, model: ModelGraph, slots: readonly AgentSlot[]): string[] {
  const layout = placements(plan);
  const groups = new Map<string, number[]>();
  for (const p of layout) if (plan.stages[p.stage].tensorParallel > 1) groups.set(`${p.stage}/${p.replica}`, [...(groups.get(`${p.stage}/${p.replica}`) ?? []), p.rank]);
  const split = [...groups].filter(([, ranks]) => new Set(ranks.map((r) => slots[r].target.alias)).size > 1);
  if (split.length === 0) return [];
  const traffic = rankTraffic(plan, model);
  return split.map(([key, ranks]) => {
    const [stage, replica] = key.split('/').map(Number);
    const where = ranks.map((r) => `rank ${r} on ${slots[r].target.alias}${slots[r].gpu ? ` GPU ${slots[r].gpu!.index}` : ''}`).join(', ');
    const crossing = traffic ? crossHostBytes(traffic, ranks, slots) : undefined;
    const price =
      crossing === undefined
        ? 'the cost model could not price it'
        : `${(crossing.bytes / 1024 ** 2).toFixed(1)} MiB per step cross hosts: ${ms(crossing, ETHERNET)} over 1 Gb/s Ethernet (the default before a link survey) against ${ms(crossing, LOOPBACK)} inside one host`;
    return `Stage ${stage} replica ${replica}: its tensor-parallel group spans hosts (${where}); ${price}. Keep a tensor-parallel group on one host: give stages[${stage}].devices devices of one host.`;
  });
}

const ms = (c: { bytes: number; transfers: number }, link: { alpha: number; beta: number }) => `${((c.transfers * link.alpha + c.bytes / link.beta) * 1000).toFixed(1)} ms`;

/** Bytes per step between ranks, from the cost model on a cluster of one device per rank (the bytes do not depend on the devices). */
function rankTraffic(plan: Plan, model: ModelGraph): Array<{ from: number; to: number; bytes: number }> | undefined {
  const layout = placements(plan);
  const byRank = { ...plan, stages: plan.stages.map((s, i) => ({ ...s, devices: layout.filter((p) => p.stage === i).map((p) => p.rank) })) };
  try {
    const cluster = parseClusterSpec({ name: 'ranks', hosts: [{ name: 'ranks', devices: [{ preset: 'cpu-core', count: layout.length }], intraLink: LOOPBACK }] });
    return costOfPlan(byRank, model, cluster).links;
  } catch {
    return undefined;
  }
}

function crossHostBytes(traffic: Array<{ from: number; to: number; bytes: number }>, ranks: number[], slots: readonly AgentSlot[]): { bytes: number; transfers: number } {
  const inGroup = new Set(ranks);
  const crossing = traffic.filter((t) => inGroup.has(t.from) && inGroup.has(t.to) && slots[t.from].target.alias !== slots[t.to].target.alias);
  return { bytes: crossing.reduce((s, t) => s + t.bytes, 0), transfers: crossing.length };
}
