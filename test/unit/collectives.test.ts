import { afterEach, describe, expect, it, vi } from 'vitest';
import { barrier } from '../../agents/comm/barrier.js';
import { broadcast } from '../../agents/comm/broadcast.js';
import { chunkBounds } from '../../agents/comm/chunking.js';
import { allGather, allReduce, reduceScatter, type CollectiveTuning } from '../../agents/comm/collectives.js';
import { PeerMesh } from '../../agents/comm/peerMesh.js';
import { ringArray } from '../../agents/comm/pipelinedRing.js';
import { ProcessGroup } from '../../agents/comm/processGroup.js';
import type { Connection } from '../../engine/wire/connection.js';

const meshes: PeerMesh[] = [];
afterEach(() => meshes.splice(0).forEach((m) => m.close()));

/** n fully connected members in this process, each with its own sockets, as agents would be. */
async function groups(n: number, timeoutMs?: number): Promise<ProcessGroup[]> {
  const mesh = Array.from({ length: n }, () => new PeerMesh('collectives', () => {}));
  meshes.push(...mesh);
  const ports = await Promise.all(mesh.map((m) => m.listen('127.0.0.1')));
  const peers = ports.map((port, rank) => ({ rank, host: '127.0.0.1', port }));
  await Promise.all(mesh.map((m, rank) => m.connect(rank, peers.filter((p) => p.rank !== rank))));
  const members = Array.from({ length: n }, (_, r) => r);
  return mesh.map((m, rank) => new ProcessGroup(rank, members, m.links, { timeoutMs }));
}

/** Deterministic pseudo-random floats (not integers, so summation order matters to the last bit). */
function noise(length: number, seed: number): Float32Array {
  let x = seed * 2654435761 + 1;
  return Float32Array.from({ length }, () => {
    x = (x * 1103515245 + 12345) % 2147483648;
    return x / 2147483648 - 0.5;
  });
}

function sum64(inputs: Float32Array[]): Float64Array {
  const out = new Float64Array(inputs[0].length);
  for (const a of inputs) for (let i = 0; i < a.length; i++) out[i] += a[i];
  return out;
}

function expectClose(actual: Float32Array, expected: Float64Array): void {
  expect(actual.length).toBe(expected.length);
  let worst = 0;
  for (let i = 0; i < actual.length; i++) worst = Math.max(worst, Math.abs(actual[i] - expected[i]));
  expect(worst).toBeLessThan(1e-5);
}

function expectIdentical(arrays: Float32Array[]): void {
  const bytes = arrays.map((a) => Buffer.from(a.buffer, a.byteOffset, a.byteLength));
  for (const b of bytes.slice(1)) expect(b.equals(bytes[0])).toBe(true);
}

// Small tuning forces many segments and the ring even on short arrays, so pipelining is exercised.
const RING: CollectiveTuning = { smallBytes: 0, segmentBytes: 64, window: 3 };
const DIRECT: CollectiveTuning = { smallBytes: 1 << 30 };
/** Short arrays through the ring too (the default would exchange them directly). */
const RING_IF_SHORT = (length: number): CollectiveTuning => (length * 4 <= 64 << 10 ? { smallBytes: 0 } : {});

describe.each([2, 3, 4])('collectives over %i members', (n) => {
  it.each([
    ['ring', RING],
    ['direct exchange', DIRECT],
    ['default', {}],
  ] as const)('all-reduce (%s) sums uneven lengths, shorter than n too, identically everywhere', async (_name, tuning) => {
    const g = await groups(n);
    for (const length of [0, 1, n - 1, n + 1, 1001]) {
      const inputs = g.map((_, r) => noise(length, r + 1));
      const data = inputs.map((a) => a.slice());
      await Promise.all(g.map((grp, r) => allReduce(grp, data[r], `len${length}`, tuning)));
      expectIdentical(data);
      expectClose(data[0], sum64(inputs));
    }
  });

  it('all-reduce of 8 MB takes the pipelined ring and agrees everywhere', async () => {
    const g = await groups(n);
    const length = (8 << 20) / 4 + 3;
    const inputs = g.map((_, r) => noise(length, 10 + r));
    const data = inputs.map((a) => a.slice());
    await Promise.all(g.map((grp, r) => allReduce(grp, data[r], 'big')));
    expectIdentical(data);
    expectClose(data[0], sum64(inputs));
  });

  it('arrays from ringArray (reduced in place) give bit for bit the sums of ordinary arrays', async () => {
    const g = await groups(n);
    for (const length of [1001, (8 << 20) / 4 + 3]) {
      const inputs = g.map((_, r) => noise(length, 40 + r));
      const plain = inputs.map((a) => a.slice());
      await Promise.all(g.map((grp, r) => allReduce(grp, plain[r], `plain${length}`, RING_IF_SHORT(length))));
      // Member 0 keeps an ordinary array: the two kinds mix in one collective.
      const mixed = inputs.map((a, r) => {
        const out = r === 0 ? new Float32Array(length) : ringArray(length, n);
        out.set(a);
        return out;
      });
      await Promise.all(g.map((grp, r) => allReduce(grp, mixed[r], `mixed${length}`, RING_IF_SHORT(length))));
      expectIdentical([...plain, ...mixed]);
      expectClose(mixed[1], sum64(inputs));
    }
  });

  it('reduce-scatter leaves member i the sum of chunk i; all-gather puts the chunks back together', async () => {
    const g = await groups(n);
    for (const length of [1, n + 2, 5000]) {
      const inputs = g.map((_, r) => noise(length, 20 + r));
      const data = inputs.map((a) => a.slice());
      const owned = await Promise.all(g.map((grp, r) => reduceScatter(grp, data[r], `rs${length}`, RING)));
      const total = sum64(inputs);
      owned.forEach((chunk, i) => {
        const [a, b] = chunkBounds(length, n, i);
        expectClose(chunk, total.subarray(a, b));
      });
      // All-gather from a layout where only each owner's chunk is meaningful.
      const gathered = g.map((_, i) => {
        const out = new Float32Array(length).fill(NaN);
        out.set(owned[i], chunkBounds(length, n, i)[0]);
        return out;
      });
      await Promise.all(g.map((grp, r) => allGather(grp, gathered[r], `ag${length}`, RING)));
      expectIdentical(gathered);
      expectClose(gathered[0], total);
    }
  });

  it.each([10, 300_000])('broadcast of %i floats from every root reaches every member', async (length) => {
    const g = await groups(n);
    for (let root = 0; root < n; root++) {
      const data = g.map((_, r) => (r === root ? noise(length, 99) : new Float32Array(length)));
      await Promise.all(g.map((grp, r) => broadcast(grp, data[r], root, `b${root}`)));
      expectIdentical(data);
      expect(data[(root + 1) % n][length - 1]).toBe(noise(length, 99)[length - 1]);
    }
  });

  it('barrier releases nobody until everyone has arrived', async () => {
    const g = await groups(n);
    // The early members' receives are observed: once each has heard every other early member, all it
    // can still wait for is the last member, so nobody may have been released at that point.
    const heardFromEarly: Promise<unknown>[] = [];
    const early = g.slice(0, n - 1).map((grp) => {
      const links = new Map(
        grp.others().map((r) => {
          const conn = grp.link(r);
          const spied = new Proxy(conn, {
            get: (target, key) => {
              if (key !== 'receive') {
                const value = Reflect.get(target, key, target);
                return typeof value === 'function' ? value.bind(target) : value;
              }
              return (...args: Parameters<Connection['receive']>) => {
                const received = target.receive(...args);
                if (r !== n - 1) heardFromEarly.push(received);
                return received;
              };
            },
          });
          return [r, spied] as const;
        }),
      );
      return new ProcessGroup(grp.rank, grp.members, links);
    });
    const log: string[] = [];
    const waiting = early.map((grp) => barrier(grp, 'b').then(() => log.push(`released ${grp.rank}`)));
    await vi.waitFor(() => expect(heardFromEarly).toHaveLength((n - 1) * (n - 2)));
    await Promise.all(heardFromEarly);
    log.push('last member arrives');
    await Promise.all([barrier(g[n - 1], 'b'), ...waiting]);
    expect(log[0]).toBe('last member arrives');
    expect(log.slice(1).sort()).toEqual(early.map((grp) => `released ${grp.rank}`).sort());
  });
});

describe('collectives never hang silently', () => {
  it('a timeout names the rank, the collective, the tag, the step and the peer it waits for', async () => {
    const g = await groups(3, 200);
    // Ranks 0 and 1 enter the all-reduce; rank 2 never does.
    const results = await Promise.allSettled([0, 1].map((r) => allReduce(g[r], new Float32Array(1 << 20), 's17/allreduce')));
    const messages = results.map((res) => (res.status === 'rejected' ? (res.reason as Error).message : 'resolved'));
    // In the ring, rank 0 receives from rank 2 (its predecessor); rank 1 from rank 0, which is stuck.
    expect(messages[0]).toMatch(/^rank 0: all-reduce s17\/allreduce timed out after 0\.2 s waiting for rank 2 \(127\.0\.0\.1:\d+\) at rs0\/j0$/);
    expect(messages[1]).toMatch(/^rank 1: all-reduce s17\/allreduce timed out after 0\.2 s waiting for rank 0 \(127\.0\.0\.1:\d+\) at /);
  });

  it('a peer that closes fails the collective at once, naming that peer', async () => {
    // With a 60 s receive timeout, "failed …" naming the peer (not "timed out") shows the closed link ended it.
    const g = await groups(2, 60_000);
    const pending = allReduce(g[0], new Float32Array(1 << 20), 's3/allreduce');
    meshes[1].close();
    await expect(pending).rejects.toThrow(/^rank 0: all-reduce s3\/allreduce failed.*rank 1 \(127\.0\.0\.1:\d+\)/);
  });

  it('arrays of different lengths are reported, not silently mis-summed', async () => {
    const g = await groups(2, 5_000);
    const results = await Promise.allSettled([allReduce(g[0], new Float32Array(100), 't', DIRECT), allReduce(g[1], new Float32Array(101), 't', DIRECT)]);
    expect(results.map((r) => r.status)).toEqual(['rejected', 'rejected']);
    expect(String((results[0] as PromiseRejectedResult).reason)).toMatch(/same length/);
  });
});
