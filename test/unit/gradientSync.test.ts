import '@tensorflow/tfjs-backend-cpu';
import * as tf from '@tensorflow/tfjs-core';
import { afterEach, beforeAll, describe, expect, it } from 'vitest';
import { PeerMesh } from '../../agents/comm/peerMesh.js';
import { ProcessGroup } from '../../agents/comm/processGroup.js';
import { overlaps, planBuckets } from '../../agents/exec/gradientBuckets.js';
import { GradientSync } from '../../agents/exec/gradientSync.js';
import type { OptimizerState } from '../../agents/exec/optimizer.js';
import type { OptimizerConfig } from '../../engine/plan/plan.js';
import { initialValues, reference, SHAPES, size, train, variables, type Member } from '../support/gradientCase.js';

/**
 * GradientSync against one process: members of a data-parallel group each get different gradients
 * whose sum is the one-process gradient, and after several steps every member's parameters must equal
 * the one-process parameters within float rounding, whatever the ZeRO stage, bucket size or clipping.
 */

beforeAll(async () => {
  await tf.setBackend('cpu');
});

const meshes: PeerMesh[] = [];
afterEach(() => meshes.splice(0).forEach((m) => m.close()));

/** n connected agents in this process, each with its own sockets; returns their meshes' links. */
async function connect(n: number): Promise<PeerMesh[]> {
  const mesh = Array.from({ length: n }, () => new PeerMesh('gradient-sync', () => {}));
  meshes.push(...mesh);
  const ports = await Promise.all(mesh.map((m) => m.listen('127.0.0.1')));
  const peers = ports.map((port, rank) => ({ rank, host: '127.0.0.1', port }));
  await Promise.all(mesh.map((m, rank) => m.connect(rank, peers.filter((p) => p.rank !== rank))));
  return mesh;
}

const groupOf = (mesh: PeerMesh[], rank: number, members: number[]) => new ProcessGroup(rank, members, mesh[rank].links, { timeoutMs: 10_000 });

function expectClose(actual: Float32Array, expected: Float32Array, what: string): void {
  let worst = 0;
  let scale = 0;
  for (let e = 0; e < expected.length; e++) {
    worst = Math.max(worst, Math.abs(actual[e] - expected[e]));
    scale = Math.max(scale, Math.abs(expected[e]));
  }
  expect(worst / Math.max(scale, 1e-12), what).toBeLessThan(1e-5);
}

function expectIdentical(members: Member[]): void {
  for (const m of members.slice(1)) {
    m.params.forEach((p, i) => expect(Buffer.from((p.dataSync() as Float32Array).buffer).equals(Buffer.from((members[0].params[i].dataSync() as Float32Array).buffer))).toBe(true));
  }
}

const SGD: OptimizerConfig = { kind: 'sgd', learningRate: 0.1, momentum: 0.9 };
const ADAM: OptimizerConfig = { kind: 'adam', learningRate: 0.01, beta1: 0.9, beta2: 0.999, epsilon: 1e-7 };
const STEPS = 4;

/** One stage served by `n` replicas, each member with its own copy of the initial parameters. */
async function oneStage(n: number, zero: number, config: OptimizerConfig, bucketBytes: number, clipNorm?: number): Promise<Member[]> {
  const mesh = await connect(n);
  const all = Array.from({ length: n }, (_, r) => r);
  return Array.from({ length: n }, (_, r) => {
    const params = variables(initialValues(), SHAPES);
    const group = groupOf(mesh, r, all);
    const clip = clipNorm === undefined ? undefined : { norm: clipNorm, group };
    return { sync: new GradientSync({ group, params, zero, optimizer: config, bucketBytes, clip }), params, indices: SHAPES.map((_, i) => i), replica: r };
  });
}

const dispose = (members: Member[]) => members.forEach((m) => (m.sync.dispose(), m.params.forEach((p) => p.dispose())));

describe('gradient buckets', () => {
  it('cover every parameter once, last parameters first, cut by the byte budget', () => {
    const sizes = SHAPES.map(size);
    expect(planBuckets(sizes, 0)).toEqual([{ first: 0, end: 7, offsets: [0, 96, 104, 152, 158, 176, 179], length: 180 }]);
    // 40 bytes: [1, 3, 18 → 88 bytes] closes at parameter 4; [6, 48] at 2; [8, 96] at 0.
    expect(planBuckets(sizes, 40).map((b) => [b.first, b.end])).toEqual([[4, 7], [2, 4], [0, 2]]);
    expect(planBuckets(sizes, 4).map((b) => [b.first, b.end])).toEqual([[6, 7], [5, 6], [4, 5], [3, 4], [2, 3], [1, 2], [0, 1]]);
    expect(() => planBuckets(sizes, -1)).toThrow(/whole number of bytes/);
  });

  it('name the parameter parts that fall in a chunk', () => {
    const [bucket] = planBuckets([4, 3, 5], 0);
    expect(overlaps(bucket, [4, 3, 5], 3, 8)).toEqual([
      { param: 0, start: 3, stop: 4, at: 0 },
      { param: 1, start: 0, stop: 3, at: 1 },
      { param: 2, start: 0, stop: 1, at: 4 },
    ]);
  });
});

describe.each([
  ['sgd+momentum', SGD],
  ['adam', ADAM],
] as const)('GradientSync with %s matches one process', (_name, config) => {
  it.each([
    [2, 0],
    [2, 1],
    [2, 2],
    [4, 0],
    [4, 1],
    [4, 2],
  ])('%i replicas, ZeRO %i, with and without clipping', async (n, zero) => {
    for (const clipNorm of [undefined, 0.5]) {
      const expected = reference(n, STEPS, config, clipNorm).values;
      const members = await oneStage(n, zero, config, 40, clipNorm);
      const timings = await train(members, 0, STEPS);
      for (const t of timings) expect(Math.min(t.commMs, t.allReduceMs)).toBeGreaterThanOrEqual(0);
      for (const m of members) m.params.forEach((p, i) => expectClose(p.dataSync() as Float32Array, expected[i], `replica ${m.replica} parameter ${i} clip ${clipNorm}`));
      expectIdentical(members);
      dispose(members);
    }
  });
});

describe('GradientSync', () => {
  it('gives the same parameters whatever the bucket size (ZeRO 0: bit for bit)', async () => {
    for (const zero of [0, 2]) {
      const results: Float32Array[][] = [];
      for (const bucketBytes of [0, 4, 40, 300, 1 << 20]) {
        const members = await oneStage(3, zero, ADAM, bucketBytes, 0.5);
        await train(members, 0, STEPS);
        results.push(members[0].params.map((p) => (p.dataSync() as Float32Array).slice()));
        dispose(members);
      }
      for (const r of results.slice(1)) {
        r.forEach((values, i) => (zero === 0 ? expect(Buffer.from(values.buffer).equals(Buffer.from(results[0][i].buffer))).toBe(true) : expectClose(values, results[0][i], `parameter ${i}`)));
      }
    }
  });

  it('clips by the norm of the whole model: two stages of two replicas, a replicated parameter counted once', async () => {
    // Stage A (ZeRO 0) holds the model's parameters 0–3, stage B (ZeRO 2) 4–6. Stage A also holds a
    // copy of parameter 6, as a tensor-replicated parameter sits on several shards: it is trained
    // the same way but must not count towards the norm twice.
    const clipNorm = 0.5;
    const expected = reference(2, STEPS, SGD, clipNorm).values;
    const mesh = await connect(4);
    const everyone = [0, 1, 2, 3];
    const members: Member[] = everyone.map((rank) => {
      const stageA = rank < 2;
      const indices = stageA ? [0, 1, 2, 3, 6] : [4, 5, 6];
      const shapes = indices.map((i) => SHAPES[i]);
      const params = variables(indices.map((i) => initialValues()[i]), shapes);
      const group = groupOf(mesh, rank, stageA ? [0, 1] : [2, 3]);
      const clip = { norm: clipNorm, group: groupOf(mesh, rank, everyone), countsTowardNorm: indices.map((_, i) => !(stageA && i === 4)) };
      const sync = new GradientSync({ group, params, zero: stageA ? 0 : 2, optimizer: SGD, bucketBytes: 40, clip, tagPrefix: stageA ? 'a' : 'b' });
      return { sync, params, indices, replica: rank % 2 };
    });
    await train(members, 0, STEPS);
    for (const m of members) m.params.forEach((p, i) => expectClose(p.dataSync() as Float32Array, expected[m.indices[i]], `replica ${m.replica} model parameter ${m.indices[i]}`));
    dispose(members);
  });

  it('gathers the optimizer state in the replicated layout and restores it under another ZeRO stage', async () => {
    const n = 3;
    const expected = reference(n, 2 * STEPS, ADAM);
    const halfway = reference(n, STEPS, ADAM).state;
    const first = await oneStage(n, 2, ADAM, 40);
    await train(first, 0, STEPS);
    const states = await Promise.all(first.map((m) => m.sync.gatherState()));
    const saved = first.map((m) => m.params.map((p) => (p.dataSync() as Float32Array).slice()));
    expectState(states[0], halfway);
    for (const s of states.slice(1)) expectState(s, states[0]);
    dispose(first);
    // Resume under ZeRO 0, 1 and 2 (other bucket sizes too) from the ZeRO-2 state.
    for (const [zero, bucketBytes] of [
      [0, 40],
      [1, 0],
      [2, 4],
    ]) {
      const resumed = await oneStage(n, zero, ADAM, bucketBytes);
      resumed.forEach((m, r) => {
        m.params.forEach((p, i) => p.assign(tf.tensor(saved[r][i], p.shape)));
        m.sync.importState(states[r]);
      });
      await train(resumed, STEPS, STEPS);
      for (const m of resumed) m.params.forEach((p, i) => expectClose(p.dataSync() as Float32Array, expected.values[i], `ZeRO ${zero} parameter ${i}`));
      dispose(resumed);
    }
  });

  it('keeps no tensors from step to step', async () => {
    for (const zero of [0, 1, 2]) {
      const members = await oneStage(2, zero, ADAM, 40, 0.5);
      await train(members, 0, 1);
      const before = tf.memory().numTensors;
      await train(members, 1, 2);
      expect(tf.memory().numTensors, `ZeRO ${zero}`).toBe(before);
      dispose(members);
    }
  });

  it('refuses ZeRO 3, a missing gradient and a gradient of the wrong size, saying what to do', async () => {
    const [m] = await oneStage(1, 0, SGD, 0);
    const params = m.params;
    expect(() => new GradientSync({ group: new ProcessGroup(0, [0], new Map()), params, zero: 3, optimizer: SGD })).toThrow(/ZeRO stage 3/);
    expect(() => m.sync.gradReady(0, tf.zeros([3]))).toThrow(/has 3 values but the parameter has 96/);
    m.sync.gradReady(6, tf.zeros([1]));
    expect(() => m.sync.gradReady(6, tf.zeros([1]))).toThrow(/second gradient/);
    await expect(m.sync.finish(7)).rejects.toThrow(/step 7.*parameters 0, 1, 2, 3, 4, 5 of 7 got no gradient/);
    dispose([m]);
  });
});

function expectState(actual: OptimizerState, expected: OptimizerState): void {
  expect(actual.step).toBe(expected.step);
  expect(Object.keys(actual.slots).sort()).toEqual(Object.keys(expected.slots).sort());
  for (const [name, arrays] of Object.entries(expected.slots)) arrays.forEach((a, i) => expectClose(actual.slots[name][i], a, `slot ${name} of parameter ${i}`));
}
