import * as tf from '@tensorflow/tfjs-core';
import '@tensorflow/tfjs-backend-cpu';
import { afterEach, describe, expect, it, vi } from 'vitest';
import { PeerMesh } from '../../agents/comm/peerMesh.js';
import { ProcessGroup } from '../../agents/comm/processGroup.js';
import { FinalHandOver } from '../../agents/exec/tensorParallel/finalHandOver.js';
import type { ShardedParamSpec } from '../../agents/exec/tensorParallel/shardedParams.js';
import { TensorGroup } from '../../agents/exec/tensorParallel/tensorGroup.js';

const meshes: PeerMesh[] = [];
afterEach(() => meshes.splice(0).forEach((m) => m.close()));

/** Two tensor-parallel shards in this process, each with its own sockets. */
async function shards(): Promise<TensorGroup[]> {
  const mesh = [0, 1].map(() => new PeerMesh('handover', () => {}));
  meshes.push(...mesh);
  const ports = await Promise.all(mesh.map((m) => m.listen('127.0.0.1')));
  const peers = ports.map((port, rank) => ({ rank, host: '127.0.0.1', port }));
  await Promise.all(mesh.map((m, rank) => m.connect(rank, peers.filter((p) => p.rank !== rank))));
  return mesh.map((m, rank) => new TensorGroup(new ProcessGroup(rank, [0, 1], m.links)));
}

const spec = (sum: ShardedParamSpec['sum']): ShardedParamSpec => ({ name: sum, shape: [2], init: new Float32Array(2), sum });

describe('final gradients of a tensor-parallel shard go to the data-parallel buckets during the backward pass', () => {
  it('sums batch-split gradients over the shards, hands over in backward order, before the pass ends', async () => {
    const groups = await shards();
    // Parameter 0 is batch-split (partial sums per shard), 1 sharded, 2 replicated.
    const specs = [spec('batchSplit'), spec('sharded'), spec('replicated')];
    const results = await Promise.all(
      groups.map(async (group, shard) => {
        const got: Array<{ k: number; values: number[] }> = [];
        const handOver = new FinalHandOver(group, specs, (k, grad) => {
          got.push({ k, values: Array.from(grad.dataSync()) });
          grad.dispose();
        });
        // The backward pass finishes the last layer first: parameter 2, then 0 and 1 (one layer).
        handOver.add([tf.tensor1d([7, 8])], [2]);
        handOver.add([tf.tensor1d([1 + shard, 10 * (1 + shard)]), tf.tensor1d([shard, shard])], [0, 1]);
        // While "earlier layers compute", the first hand-over has happened already.
        await new Promise((r) => setImmediate(r));
        const early = got.map((g) => g.k);
        await handOver.done();
        return { early, got };
      }),
    );
    for (const [shard, { early, got }] of results.entries()) {
      expect(early).toContain(2);
      expect(got.map((g) => g.k)).toEqual([2, 0, 1]);
      expect(got[0].values).toEqual([7, 8]);
      expect(got[1].values).toEqual([1 + 2, 10 + 20]); // summed over both shards
      expect(got[2].values).toEqual([shard, shard]); // a shard's own slice, untouched
    }
  });

  it('sums that fail reject done() with the first failure, and nothing is left unhandled or held', async () => {
    const groups = await shards();
    const unhandled: unknown[] = [];
    const onUnhandled = (reason: unknown) => unhandled.push(reason);
    process.on('unhandledRejection', onUnhandled);
    try {
      const handed: number[] = [];
      const handOver = new FinalHandOver(groups[0], [spec('batchSplit'), spec('batchSplit'), spec('sharded')], (k, g) => {
        handed.push(k);
        g.dispose();
      });
      meshes[1].close();
      const before = tf.memory().numTensors;
      handOver.add([tf.tensor1d([1, 2]), tf.tensor1d([3, 4]), tf.tensor1d([5, 6])], [0, 1, 2]);
      await expect(handOver.done()).rejects.toThrow(/all-reduce/);
      // Every tensor is let go once every sum has settled: wait for that, then one more turn of the
      // event loop, at the end of which Node has reported any rejection left unhandled.
      await vi.waitFor(() => expect(tf.memory().numTensors).toBe(before));
      await new Promise((r) => setImmediate(r));
      expect(unhandled).toEqual([]);
      expect(handed).toEqual([]);
    } finally {
      process.off('unhandledRejection', onUnhandled);
    }
  });
});
