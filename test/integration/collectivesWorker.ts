/**
 * One rank of test/integration/collectives.test.ts, a real process. Prints `{"port"}`, reads the peers
 * as one JSON line on stdin, runs the scenario, prints one JSON result line and exits.
 *   correct: all-reduce 8 MB + 1 float, reduce-scatter, all-gather, broadcast, barrier; prints digests.
 *   die:     the highest rank exits right after connecting; the others' all-reduce must fail fast,
 *            naming it (they stay until stdin closes, as agents stay until the coordinator's word).
 */
import { createHash } from 'node:crypto';
import { createInterface } from 'node:readline';
import { barrier } from '../../agents/comm/barrier.js';
import { broadcast } from '../../agents/comm/broadcast.js';
import { allGather, allReduce, reduceScatter } from '../../agents/comm/collectives.js';
import { PeerMesh, type PeerAddress } from '../../agents/comm/peerMesh.js';
import { ProcessGroup } from '../../agents/comm/processGroup.js';

const [rank, procs] = [Number(process.argv[2]), Number(process.argv[3])];
const scenario = process.argv[4];
const digest = (a: Float32Array) => createHash('sha256').update(new Uint8Array(a.buffer, a.byteOffset, a.byteLength)).digest('hex');
const emit = (result: Record<string, unknown>) => console.log(JSON.stringify({ rank, ...result }));

async function main(): Promise<void> {
  const mesh = new PeerMesh('integration-secret', () => {});
  console.log(JSON.stringify({ port: await mesh.listen('127.0.0.1') }));
  const input = createInterface({ input: process.stdin });
  // Like an agent, a rank whose collective failed keeps its links until it is told to go (the runner
  // closes stdin once every rank has reported): exiting at once would cut the others' links too, and
  // they could blame this rank instead of the one that died.
  const released = new Promise<void>((r) => input.once('close', () => r()));
  const line = await new Promise<string>((r) => input.once('line', r));
  await mesh.connect(rank, (JSON.parse(line) as PeerAddress[]).filter((p) => p.rank !== rank));
  const group = new ProcessGroup(rank, Array.from({ length: procs }, (_, r) => r), mesh.links, { timeoutMs: 60_000 });
  const length = (8 << 20) / 4 + 1;
  const data = Float32Array.from({ length }, (_, i) => ((i % 1000) + rank) * 0.001);
  if (scenario === 'die') {
    if (rank === procs - 1) process.exit(0);
    try {
      await allReduce(group, data, 's5/allreduce');
      emit({ error: null });
    } catch (err) {
      emit({ error: (err as Error).message });
    }
    await released;
    process.exit(0);
  }
  await allReduce(group, data, 's1/allreduce');
  const allReduced = { digest: digest(data), last: data[length - 1] };
  // Reduce-scatter leaves this rank's chunk summed in place; all-gather then completes the same array.
  const shared = Float32Array.from({ length: 1000 }, () => rank + 1);
  const owned = await reduceScatter(group, shared, 's1/rs');
  const ownedValues = Array.from(new Set(owned));
  await allGather(group, shared, 's1/ag');
  const fromRoot = rank === 1 ? Float32Array.from({ length: 300_000 }, (_, i) => i) : new Float32Array(300_000);
  await broadcast(group, fromRoot, 1, 's1/bcast');
  await barrier(group, 's1/barrier');
  emit({ allReduced, ownedValues, ownedLength: owned.length, gatheredValues: Array.from(new Set(shared)), broadcast: digest(fromRoot) });
  mesh.close();
  process.exit(0);
}

main().catch((err: Error) => {
  emit({ error: err.message });
  process.exit(1);
});
