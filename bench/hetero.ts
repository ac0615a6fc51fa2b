/**
 * Heterogeneous-cluster benchmark: 4 data-parallel agents, 2 of them behaving as
 * devices `--slowdown` times slower (the agent sleeps (s − 1) × each pass's duration, without using
 * a core), 16 virtual nodes. Throughput with the virtual nodes spread evenly (4 each) vs weighted by
 * measured speed (the coordinator re-balances after a few steps), side by side in one run.
 *
 *   npm run bench -- hetero [--slowdown 2] [--steps 40] [--warmup 10] [--skip-real]
 *
 * Two workloads: stages of fixed synthetic duration (every pass sleeps `--pass-ms`; 4 agents on a
 * 2-core machine would otherwise measure core contention, not the allocation), and real training of
 * MNIST `mlp` (contended here: say so). Target: weighted ≥ 1.25× even (VirtualFlow: up to 1.42×).
 */
import { zooModel } from '../engine/model/zoo.js';
import type { Plan } from '../engine/plan/plan.js';
import { presetPlan } from '../engine/plan/presets.js';
import { runJob } from './lib/jobRun.js';
import { report, type Column } from './lib/report.js';
import { args, numberFlag as flag } from './lib/args.js';

const slowdown = flag('slowdown', 2);
const steps = flag('steps', 40);
const warmup = flag('warmup', 10);
const passMs = flag('pass-ms', 20);
const skipReal = args.includes('--skip-real');

const model = zooModel('mlp');
const plan: Plan = { ...presetPlan(model, 'pp1-dp4', { globalBatch: 256, optimizer: { kind: 'sgd', learningRate: 0.05, momentum: 0.9 } }), virtualNodes: { total: 16 } };
const slowdowns = [1, 1, slowdown, slowdown];

interface Row {
  workload: string;
  evenSamplesPerSec: number;
  weightedSamplesPerSec: number;
  speedup: number;
  idealSpeedup: number;
  mapping: string;
}

// With speeds 1, 1, 1/s, 1/s: even costs 4 × s per step, the best integer split of 16 costs less.
const ideal = (() => {
  const speeds = slowdowns.map((s) => 1 / s);
  let best = Infinity;
  // Two fast replicas take a each, two slow ones b each, 2a + 2b = 16.
  for (let a = 1; a < 8; a++) best = Math.min(best, Math.max(a / speeds[0], (8 - a) / speeds[2]));
  return (4 * slowdown) / best;
})();

async function compare(workload: string, synthetic: boolean): Promise<Row> {
  const options = { agentSlowdowns: slowdowns, syntheticStageMs: synthetic ? { forward: passMs, backward: 2 * passMs } : undefined };
  const even = await runJob(model, plan, 4, warmup + steps, { ...options, rebalance: false });
  const weighted = await runJob(model, plan, 4, warmup + steps, { ...options, rebalance: true });
  const last = weighted.events.filter((e) => e.type === 'membership').at(-1);
  const mapping = last?.type === 'membership' ? last.agents.map((a) => a.virtualNodes).join('/') : '?';
  const evenSps = even.samplesPerSec(warmup);
  const weightedSps = weighted.samplesPerSec(warmup);
  return { workload, evenSamplesPerSec: evenSps, weightedSamplesPerSec: weightedSps, speedup: weightedSps / evenSps, idealSpeedup: ideal, mapping };
}

const rows: Row[] = [await compare(`synthetic passes (${passMs}/${2 * passMs} ms per virtual node)`, true)];
if (!skipReal) rows.push(await compare('MNIST mlp, real training', false));
const columns: Column<Row>[] = [
  { key: 'workload', title: 'workload' },
  { key: 'evenSamplesPerSec', title: 'even samples/s', format: (v) => (v as number).toFixed(0) },
  { key: 'weightedSamplesPerSec', title: 'weighted samples/s', format: (v) => (v as number).toFixed(0) },
  { key: 'speedup', title: 'weighted / even', format: (v) => `${(v as number).toFixed(2)}×` },
  { key: 'idealSpeedup', title: 'best split', format: (v) => `${(v as number).toFixed(2)}×` },
  { key: 'mapping', title: 'virtual nodes (weighted)' },
];
report('hetero', `Heterogeneous devices: 4 agents, 2 of them ${slowdown}× slower, 16 virtual nodes, global batch ${plan.globalBatch}`, rows, columns, [
  `Throughput over ${steps} steps after ${warmup} warm-up steps (the weighted run re-balances within them).`,
  '"best split" is what the ideal integer allocation of 16 virtual nodes gains over the even one at these speeds.',
  'Real training runs 4 agents on this machine\'s cores: the fast agents share cores, so measured speeds include contention.',
], {
  evenSamplesPerSec: rows[0].evenSamplesPerSec,
  weightedSamplesPerSec: rows[0].weightedSamplesPerSec,
  slowdown,
});
