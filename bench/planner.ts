/**
 * Planner benchmark: search time and quality of suggestPlans on zoo models × clusters from 8 to 1,024
 * devices (homogeneous and mixed, 10–400 Gb/s between hosts), against the exhaustive search of the
 * same space, and the seed papers' claims in simulation on Whale's testbed.
 *
 *   npm run bench -- planner [--exhaustive-max N]   (exhaustive search up to N devices; default 256)
 *
 * Times are wall-clock on one core: the planner is single-threaded JavaScript (run it under
 * `taskset -c 0` to pin V8's helper threads too).
 */
import { readFileSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { parseClusterSpec } from '../engine/cluster/parseClusterSpec.js';
import type { ClusterSpec } from '../engine/cluster/spec.js';
import type { CostOptions } from '../engine/cost/planCost.js';
import { zooModel } from '../engine/model/zoo.js';
import { planShape } from '../engine/planner/formatSuggestions.js';
import { suggestPlans, type Suggestion } from '../engine/planner/suggestPlans.js';
import { report, type Column } from './lib/report.js';

const root = join(dirname(fileURLToPath(import.meta.url)), '..');
const args = process.argv.slice(2);
const flag = (name: string) => {
  const i = args.indexOf(`--${name}`);
  return i >= 0 ? args[i + 1] : undefined;
};
const exhaustiveMax = Number(flag('exhaustive-max') ?? 256);

const example = (file: string): ClusterSpec => parseClusterSpec(JSON.parse(readFileSync(join(root, 'examples/clusters', file), 'utf8')));

/** Datacenter GPUs talk over NVLink inside a host (~130 GB/s in NCCL rings); consumer GPUs and T4s over PCIe 3.0 (~12 GB/s). */
const PCIE_ONLY = new Set(['rtx-3090', 'rtx-4090', 't4']);

/** Hosts of `per` devices each, by preset, with their intra-host link; `gbps` between hosts. */
function synthetic(groups: Array<{ preset: string; hosts: number; per: number }>, gbps: number): ClusterSpec {
  const hosts = groups.flatMap((g) =>
    Array.from({ length: g.hosts }, (_, h) => ({
      name: `${g.preset}-${h}`,
      devices: [{ preset: g.preset, count: g.per }],
      intraLink: PCIE_ONLY.has(g.preset) ? { alpha: 1e-5, beta: 1.2e10 } : { alpha: 5e-6, beta: 1.3e11 },
    })),
  );
  const kinds = groups.map((g) => `${g.hosts * g.per}×${g.preset}`).join('+');
  const multiHost = hosts.length > 1;
  return parseClusterSpec({
    name: multiHost ? `${kinds} @${gbps}Gb/s` : `${kinds} (1 host)`,
    hosts,
    ...(multiHost ? { links: { interHost: { alpha: 2.5e-5, beta: (gbps * 1e9) / 8 } } } : {}),
  });
}

interface Case {
  model: string;
  cluster: ClusterSpec;
  globalBatch?: number;
}

const cases: Case[] = [
  { model: 'resnet18', cluster: synthetic([{ preset: 'rtx-4090', hosts: 1, per: 8 }], 0) },
  { model: 'vgg16', cluster: synthetic([{ preset: 'rtx-3090', hosts: 2, per: 4 }], 10) },
  { model: 'bert-base', cluster: example('dgx-a100-2x8.json'), globalBatch: 128 },
  { model: 'resnet50', cluster: example('hetero-v100-t4.json') },
  { model: 'gpt2-small', cluster: synthetic([{ preset: 'v100-32gb', hosts: 4, per: 8 }], 25), globalBatch: 128 },
  { model: 'resnet50-100k', cluster: example('whale-64xv100.json') },
  { model: 'bert-large', cluster: example('whale-64xv100.json'), globalBatch: 256 },
  { model: 'bert-base', cluster: synthetic([{ preset: 'a100-80gb', hosts: 8, per: 8 }], 100), globalBatch: 512 },
  { model: 'gpt2-medium', cluster: synthetic([{ preset: 'a100-80gb', hosts: 4, per: 8 }, { preset: 'v100-32gb', hosts: 4, per: 8 }], 100), globalBatch: 512 },
  { model: 'resnet50', cluster: synthetic([{ preset: 'a100-40gb', hosts: 16, per: 8 }], 200) },
  { model: 'gpt2-xl', cluster: synthetic([{ preset: 'h100-80gb', hosts: 32, per: 8 }], 400), globalBatch: 1024 },
  { model: 'resnet50-100k', cluster: synthetic([{ preset: 'v100-16gb', hosts: 32, per: 8 }], 25) },
  { model: 'bert-large', cluster: synthetic([{ preset: 'a100-80gb', hosts: 64, per: 8 }], 200), globalBatch: 2048 },
  { model: 'gpt2-xl', cluster: synthetic([{ preset: 'h100-80gb', hosts: 128, per: 8 }], 400), globalBatch: 4096 },
  { model: 'resnet50', cluster: synthetic([{ preset: 'a100-40gb', hosts: 64, per: 8 }, { preset: 't4', hosts: 64, per: 8 }], 100) },
];

interface Row {
  name: string;
  devices: number;
  layers: number;
  plannerMs: number;
  plannerStepMs: number | null;
  exhaustiveStepMs: number | null;
  exhaustiveMs: number | null;
  ratio: number | null;
  topPlan: string;
}

const rows: Row[] = [];
for (const c of cases) {
  const model = zooModel(c.model);
  const n = c.cluster.devices.length;
  const options = { top: 1, globalBatch: c.globalBatch };
  // The better of two runs: the first pays for JIT compilation of the planner itself.
  const runs = [suggestPlans(model, c.cluster, options), suggestPlans(model, c.cluster, options)];
  const fast = runs[0].searchMs <= runs[1].searchMs ? runs[0] : runs[1];
  const full = n <= exhaustiveMax ? suggestPlans(model, c.cluster, { ...options, exhaustive: true }) : undefined;
  const step = (s: Suggestion | undefined) => s?.predicted.stepTimeMs ?? null;
  const plannerStepMs = step(fast.suggestions[0]);
  const exhaustiveStepMs = full ? step(full.suggestions[0]) : null;
  rows.push({
    name: `${c.model} on ${c.cluster.name}`,
    devices: n,
    layers: model.layers.length,
    plannerMs: fast.searchMs,
    plannerStepMs,
    exhaustiveStepMs,
    exhaustiveMs: full ? full.searchMs : null,
    ratio: plannerStepMs !== null && exhaustiveStepMs !== null ? plannerStepMs / exhaustiveStepMs : null,
    topPlan: fast.suggestions[0] ? planShape(fast.suggestions[0].plan) : 'none fits',
  });
  process.stderr.write(`${rows[rows.length - 1].name}: ${fast.searchMs.toFixed(0)} ms\n`);
}

/** The fastest suggestion with and without a property, from the exhaustive search on Whale's testbed. */
function whaleClaim(modelName: string, globalBatch: number, cost: CostOptions, wanted: (s: Suggestion) => boolean) {
  const model = zooModel(modelName);
  const all = suggestPlans(model, example('whale-64xv100.json'), { top: 1000, globalBatch, exhaustive: true, cost }).suggestions;
  const pureDp = all.find((s) => s.plan.stages.length === 1 && s.plan.stages[0].tensorParallel === 1);
  const chosen = all.find(wanted);
  if (!pureDp || !chosen) return { ours: null, detail: 'no fitting plan of that kind' };
  return { ours: pureDp.predicted.stepTimeMs / chosen.predicted.stepTimeMs, detail: `${planShape(chosen.plan)} ${chosen.predicted.stepTimeMs.toFixed(0)} ms vs ${planShape(pureDp.plan)} ${pureDp.predicted.stepTimeMs.toFixed(0)} ms` };
}

const shardsClassifier = (s: Suggestion) => s.plan.sharding.predictions?.weight === 'S(1)';
const top100k = suggestPlans(zooModel('resnet50-100k'), example('whale-64xv100.json'), { top: 1 }).suggestions[0];
const resnet = whaleClaim('resnet50-100k', 2048, {}, shardsClassifier);
const whyResnet =
  'Our pure data parallel is an ideal ring all-reduce hidden behind backward in 25 MB buckets; 14.8× means Horovod spent ~93% of its step communicating, which an ideal 35 Gb/s ring moving 0.9 GB of fp32 gradients does not.';
const whyBert =
  'The gain depends on the per-GPU batch: with little compute per step (small batches, or fp16 tensor cores) the all-reduce of 1.3 GB of gradients is exposed and pipelining wins big; with 32 sequences per GPU it hides behind backward and pure data parallel is as fast. Whale does not state its batch here.';
const claims = [
  { name: 'resnet50-100k, 64 V100, batch 2048, fp32: top suggestion shards the 100k-class layer', ours: shardsClassifier(top100k) ? 1 : 0, paper: 1, unit: 'yes=1', detail: top100k.rationale },
  { name: 'resnet50-100k, 64 V100, batch 2048, fp32: sharded classifier + DP vs pure DP', ...resnet, paper: 14.8, why: whyResnet },
  ...[
    [256, 'fp32'],
    [2048, 'fp32'],
    [512, 'mixed'],
  ].map(([batch, precision]) => ({
    name: `bert-large, 64 V100, batch ${batch}, ${precision}: best pipelined plan vs pure DP`,
    ...whaleClaim('bert-large', Number(batch), { precision: precision as 'fp32' | 'mixed' }, (s) => s.plan.stages.length > 1),
    paper: 2.32,
    why: whyBert,
  })),
];

const ms = (v: unknown) => (typeof v === 'number' ? v.toFixed(v < 10 ? 1 : 0) : '—');
const columns: Column<Row>[] = [
  { key: 'name', title: 'case' },
  { key: 'devices', title: 'devices' },
  { key: 'layers', title: 'layers' },
  { key: 'plannerMs', title: 'search ms', format: ms },
  { key: 'plannerStepMs', title: 'planner step ms', format: ms },
  { key: 'exhaustiveStepMs', title: 'exhaustive step ms', format: ms },
  { key: 'ratio', title: 'ratio', format: (v) => (typeof v === 'number' ? v.toFixed(3) : '—') },
  { key: 'exhaustiveMs', title: 'exhaustive ms', format: ms },
  { key: 'topPlan', title: 'top plan' },
];
const notes = [
  `Step times are the cost model's predictions (costOfPlan), not measurements. Exhaustive search prices every candidate of the same space with costOfPlan; skipped (—) above ${exhaustiveMax} devices, where it prices ~2,000 plans at ~25 ms each.`,
  'search ms: the better of two runs on one core (the first includes JIT warm-up).',
  ...claims.map((c) => `${c.name}: ours ${typeof c.ours === 'number' ? c.ours.toFixed(2) : '—'}, paper ${c.paper}${'detail' in c && c.detail ? ` (${c.detail})` : ''}`),
  `Why the resnet50-100k ratio differs: ${whyResnet}`,
  `Why the bert-large ratio differs: ${whyBert}`,
];
report('planner', 'Planner: search time and quality vs exhaustive (predicted step times)', rows, columns, notes, {
  cases: rows.map(({ name, devices, plannerMs, plannerStepMs, exhaustiveStepMs }) => ({ name, devices, plannerMs, plannerStepMs, exhaustiveStepMs })),
  seedClaims: claims,
});
