import { describe, expect, test } from 'vitest';
import type { GpuFact } from '../../engine/cluster/nvidiaSmi.js';
import type { LaunchTarget, PreparedTarget } from '../../engine/node/deploy/launcher.js';
import { placeAgentSlots, splitTensorGroupWarnings } from '../../engine/node/jobs/agentPlacement.js';
import { zooModel } from '../../engine/model/zoo.js';
import { parsePlan, type Plan } from '../../engine/plan/plan.js';
import { presetPlan } from '../../engine/plan/presets.js';
import { MACHINES, standInUuid } from '../support/gpuStandIns.js';

/** Which agent holds which rank on which host and GPU: the plan's device indices over the hosts' GPUs. */
const mlp = zooModel('mlp');
const targets: LaunchTarget[] = [
  { alias: 'dgx-a', peerAddress: '10.0.0.1' },
  { alias: 'dgx-b', peerAddress: '10.0.0.2' },
];
const gpusOf = (machine: { gpus: Array<{ name: string; mib: number }>; driver: string }): GpuFact[] =>
  machine.gpus.map((g, index) => ({ index, name: g.name, memoryBytes: g.mib * 2 ** 20, uuid: standInUuid(index), driver: machine.driver }));
const twoDgx: PreparedTarget[] = targets.map((t) => ({ target: t.alias, ok: true, cpus: 128, gpus: gpusOf(MACHINES.dgxA100) }));

/** One stage over every layer of the MLP: `dataParallel` replicas of `tensorParallel` shards on `devices`. */
function tpPlan(dataParallel: number, tensorParallel: number, devices?: number[]): Plan {
  const base = presetPlan(mlp, 'pp1-dp1');
  return parsePlan({
    ...base,
    stages: [{ layers: mlp.layers.map((l) => l.id), dataParallel, tensorParallel, ...(devices ? { devices } : {}) }],
    sharding: tensorParallel > 1 ? { dense_1: { weight: 'S(1)' }, dense_2: { weight: 'S(0)', output: 'B' } } : {},
    globalBatch: 64,
  });
}

describe('placing agents on GPUs', () => {
  test('the plan\'s devices decide host and GPU of every rank; each agent sees its one GPU, memory growth on, tfjs-node-gpu required', () => {
    // Devices 8..15 are dgx-b's GPUs 0..7; the order of `devices` is the ranks' order.
    const slots = placeAgentSlots(tpPlan(2, 2, [9, 8, 14, 15]), 4, targets, twoDgx);
    expect(slots.map((s) => `${s.slot} ${s.target.alias} ${s.gpu?.index} ${s.gpu?.uuid}`)).toEqual([
      `0 dgx-b 1 ${standInUuid(1)}`,
      `1 dgx-b 0 ${standInUuid(0)}`,
      `2 dgx-b 6 ${standInUuid(6)}`,
      `3 dgx-b 7 ${standInUuid(7)}`,
    ]);
    expect(slots[2].env).toEqual({ CUDA_VISIBLE_DEVICES: '6', TF_FORCE_GPU_ALLOW_GROWTH: 'true', SHOAL_BACKEND: 'tensorflow-gpu' });
    expect(splitTensorGroupWarnings(tpPlan(2, 2, [9, 8, 14, 15]), mlp, slots)).toEqual([]);
  });

  test('without devices in the plan rank r is on device r: the first host\'s GPUs first', () => {
    const slots = placeAgentSlots(tpPlan(4, 1), 4, targets, twoDgx);
    expect(slots.map((s) => `${s.target.alias}:${s.gpu?.index}`)).toEqual(['dgx-a:0', 'dgx-a:1', 'dgx-a:2', 'dgx-a:3']);
  });

  test('a tensor-parallel group split across hosts gets one priced warning that names the ranks and the fix', () => {
    const plan = tpPlan(1, 2, [7, 8]);
    const slots = placeAgentSlots(plan, 2, targets, twoDgx);
    const [warning, ...more] = splitTensorGroupWarnings(plan, mlp, slots);
    expect(more).toEqual([]);
    expect(warning).toMatch(
      /^Stage 0 replica 0: its tensor-parallel group spans hosts \(rank 0 on dgx-a GPU 7, rank 1 on dgx-b GPU 0\); (\d+\.\d) MiB per step cross hosts: (\d+\.\d) ms over 1 Gb\/s Ethernet \(the default before a link survey\) against (\d+\.\d) ms inside one host\. Keep a tensor-parallel group on one host: give stages\[0\]\.devices devices of one host\.$/,
    );
    const [, mib, ethernet, loopback] = /; (\S+) MiB .*: (\S+) ms over .* against (\S+) ms/.exec(warning)!.map(Number);
    expect(mib).toBeGreaterThan(0);
    // 1 Gb/s against loopback's 2 GB/s: the same bytes take 16× longer, plus latency.
    expect(ethernet).toBeGreaterThan(10 * loopback);
  });

  test('a device the hosts do not have, and two ranks on one GPU, are refused before anything starts', () => {
    expect(() => placeAgentSlots(tpPlan(2, 1, [3, 16]), 2, targets, twoDgx)).toThrow(
      'Rank 1 (stage 0, replica 1) is on device 16, but the cluster has 16 devices (dgx-a: 8 GPUs, dgx-b: 8 GPUs): give the stage devices below 16 (plan stages[0].devices), or use a larger cluster.',
    );
    expect(() => placeAgentSlots(tpPlan(2, 1, [3, 3]), 2, targets, twoDgx)).toThrow(/device 3 \(dgx-a GPU 3\), which another rank holds already: one agent per GPU/);
  });

  test('mixed cards: 4× RTX 4090 and 2× T4 are devices 0–5 in nvidia-smi order; a CPU host beside them counts its cores', () => {
    const prepared: PreparedTarget[] = [
      { target: 'dgx-a', ok: true, cpus: 32, gpus: gpusOf(MACHINES.rtx4090AndT4) },
      { target: 'dgx-b', ok: true, cpus: 2, gpus: [] },
    ];
    const slots = placeAgentSlots(tpPlan(3, 1, [4, 5, 7]), 3, targets, prepared);
    expect(slots.map((s) => `${s.target.alias} ${s.gpu?.name ?? 'cpu'}`)).toEqual(['dgx-a Tesla T4', 'dgx-a Tesla T4', 'dgx-b cpu']);
    expect(slots[2].env).toEqual({});
  });

  test('--allow-cpu-fallback: still pinned, but no backend forced, so an agent without tfjs-node-gpu trains on the CPU and says why', () => {
    const slots = placeAgentSlots(tpPlan(1, 1), 1, targets, twoDgx.map((p) => ({ ...p, cpuFallback: true })));
    expect(slots[0].env).toEqual({ CUDA_VISIBLE_DEVICES: '0', TF_FORCE_GPU_ALLOW_GROWTH: 'true' });
  });

  test('CPU hosts without devices in the plan: round-robin over the hosts, as before', () => {
    const cpuHosts: PreparedTarget[] = targets.map((t) => ({ target: t.alias, ok: true, cpus: 2, gpus: [] }));
    expect(placeAgentSlots(tpPlan(3, 1), 3, targets, cpuHosts).map((s) => s.target.alias)).toEqual(['dgx-a', 'dgx-b', 'dgx-a']);
  });
});
