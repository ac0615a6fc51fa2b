/**
 * One rank of Shoal's all-reduce benchmark (spawned by bench/allreduce.ts, one process per rank).
 *
 *   tsx bench/peers/shoal_allreduce.ts --rank R --procs N --sizes 1024,4096,… --budget-bytes B
 *     [--segment-kb K] [--window W] [--small-kb K]
 *
 * Protocol with the parent: print `{"port": P}` once listening; read the peers' addresses as one JSON
 * line on stdin; then, per size, time back-to-back all-reduces between two barriers (the same
 * measurement as the torch peer). Rank 0 prints `{"results": [{ "bytes", "iters", "seconds", "cpuSeconds" }]}`.
 */
import { createInterface } from 'node:readline';
import { barrier } from '../../agents/comm/barrier.js';
import { allReduce, type CollectiveTuning } from '../../agents/comm/collectives.js';
import { PeerMesh, type PeerAddress } from '../../agents/comm/peerMesh.js';
import { ringArray } from '../../agents/comm/pipelinedRing.js';
import { ProcessGroup } from '../../agents/comm/processGroup.js';

const args = process.argv.slice(2);
const flag = (name: string) => args[args.indexOf(`--${name}`) + 1];
const rank = Number(flag('rank'));
const procs = Number(flag('procs'));
const sizes = flag('sizes').split(',').map(Number);
const budgetBytes = Number(flag('budget-bytes'));
/** Optional tuning overrides (for exploring segment size and window; defaults are the library's). */
const tuning: CollectiveTuning = {};
if (args.includes('--segment-kb')) tuning.segmentBytes = Number(flag('segment-kb')) * 1024;
if (args.includes('--window')) tuning.window = Number(flag('window'));
if (args.includes('--small-kb')) tuning.smallBytes = Number(flag('small-kb')) * 1024;

/** Iterations for one size: about `budgetBytes` of all-reduced data, at least 3, at most 300. */
export function iterationsFor(bytes: number, budget: number): number {
  return Math.max(3, Math.min(300, Math.round(budget / bytes)));
}

async function main(): Promise<void> {
  const mesh = new PeerMesh('bench-secret', (m) => console.error(`rank ${rank}: ${m}`));
  const port = await mesh.listen('127.0.0.1');
  console.log(JSON.stringify({ port }));
  const line = await new Promise<string>((resolve) => createInterface({ input: process.stdin }).once('line', resolve));
  const peers = (JSON.parse(line) as PeerAddress[]).filter((p) => p.rank !== rank);
  await mesh.connect(rank, peers);
  const group = new ProcessGroup(rank, Array.from({ length: procs }, (_, r) => r), mesh.links);
  const results: Array<{ bytes: number; iters: number; seconds: number; cpuSeconds: number }> = [];
  for (const bytes of sizes) {
    // Zeros: sums stay zero, so no denormals or infinities slow the arithmetic after many iterations.
    // Allocated as agents allocate their gradient buckets (ringArray), so reductions add in place.
    const data = ringArray(bytes / 4, procs);
    const iters = iterationsFor(bytes, budgetBytes);
    await allReduce(group, data, `warm${bytes}`, tuning);
    await barrier(group, `start${bytes}`);
    const t0 = performance.now();
    const cpu0 = process.cpuUsage();
    for (let i = 0; i < iters; i++) await allReduce(group, data, `b${bytes}/i${i}`, tuning);
    const cpu = process.cpuUsage(cpu0);
    await barrier(group, `end${bytes}`);
    // CPU time (user + system, this process) per all-reduce: what it costs, however busy the machine.
    results.push({ bytes, iters, seconds: (performance.now() - t0) / 1000 / iters, cpuSeconds: (cpu.user + cpu.system) / 1e6 / iters });
  }
  if (rank === 0) console.log(JSON.stringify({ results }));
  mesh.close();
  process.exit(0);
}

main().catch((err: Error) => {
  console.error(`rank ${rank}: ${err.message}`);
  process.exit(1);
});
