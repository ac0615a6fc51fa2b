import { readdirSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { localClusterSpec } from '../../engine/cluster/cluster.js';
import { parseClusterSpec } from '../../engine/cluster/parseClusterSpec.js';
import type { ClusterSpec } from '../../engine/cluster/spec.js';
import type { ModelGraph } from '../../engine/model/graph.js';
import { zooModel } from '../../engine/model/zoo.js';
import type { Diagnostic } from '../../engine/plan/diagnostics.js';
import { executionSupport } from '../../engine/plan/executionSupport.js';
import type { Plan } from '../../engine/plan/plan.js';
import { presetPlan } from '../../engine/plan/presets.js';
import { validatePlan } from '../../engine/plan/validate.js';

const mlp = zooModel('mlp');
const cnn = zooModel('cnn');
/** mlp whose dense_2 is of a kind with weights that Shoal has no sharding rule for. */
/** mlp as if opened from a model file (the agents build it with tfjs-layers). */
const fromFile: ModelGraph = { ...mlp, source: { modelFile: '/models/mlp/model.json' } };
/** …with a layer class Shoal does not know, and with dense_2 a second call of dense_1 (a shared layer). */
const unknownLayer: ModelGraph = { ...fromFile, layers: fromFile.layers.map((l) => (l.id === 'dense_2' ? { ...l, spec: { kind: 'opaque', className: 'MyLayer', config: {} } } : l)) };
/** …with dense_2 a class tfjs-layers builds but the agents refuse (README's table of refused classes). */
const refusedClass: ModelGraph = { ...fromFile, layers: fromFile.layers.map((l) => (l.id === 'dense_2' ? { ...l, spec: { kind: 'tfjsLayer', className: 'GaussianNoise', config: { stddev: 0.1 }, outputShape: l.outputShape, weights: [] } } : l)) };
const causalConv: ModelGraph = { ...fromFile, layers: fromFile.layers.map((l) => (l.id === 'dense_2' ? { ...l, spec: { kind: 'conv', rank: 1, filters: 4, kernelSize: [2], strides: [1], dilation: [1], padding: 'causal', useBias: true, activation: 'linear' } } : l)) };
const shared: ModelGraph = { ...fromFile, layers: fromFile.layers.map((l) => (l.id === 'dense_2' ? { ...l, id: 'dense_1@1' } : l)) };
/** …with dense_2 a batch normalisation, which a tensor-parallel stage (running on each shard's rows) cannot run. */
const batchNorm: ModelGraph = { ...fromFile, layers: fromFile.layers.map((l) => (l.id === 'dense_2' ? { ...l, spec: { kind: 'batchNorm', axis: -1, center: true, scale: true } } : l)) };
/** mlp whose classifier ends in a softmax: not elementwise, so it cannot be split by classes. */
const softmaxHead: ModelGraph = { ...mlp, layers: mlp.layers.map((l) => (l.id === 'logits' ? { ...l, spec: { kind: 'dense', units: 10, activation: 'softmax' } } : l)) };
const opaque: ModelGraph = { ...mlp, layers: mlp.layers.map((l) => (l.id === 'dense_2' ? { ...l, spec: { kind: 'reshape', targetShape: [256] } } : l)) };

interface Case {
  code: string;
  severity: Diagnostic['severity'];
  where: Diagnostic['where'];
  plan: Plan;
  model?: ModelGraph;
  cluster?: ClusterSpec;
  /** Capability diagnostics come from executionSupport, not validatePlan. */
  execution?: boolean;
}

/** A preset on mlp (or `model`), changed by `edit`. */
function plan(preset: string, edit: (p: Plan) => void = () => {}, model = mlp): Plan {
  const p = presetPlan(model, preset);
  edit(p);
  return p;
}
const tensor = (degree: number) => (p: Plan) => (p.stages[0].tensorParallel = degree);

const CASES: Case[] = [
  { code: 'model-mismatch', severity: 'error', where: { field: 'model' }, plan: plan('pp1-dp1', (p) => (p.model = 'cnn')) },
  { code: 'stage-empty', severity: 'error', where: { stage: 1, field: 'layers' }, plan: plan('pp2-dp1', (p) => (p.stages[1].layers = [])) },
  { code: 'unknown-layer', severity: 'error', where: { stage: 0, layer: 'ghost' }, plan: plan('pp2-dp1', (p) => p.stages[0].layers.push('ghost')) },
  { code: 'layer-twice', severity: 'error', where: { stage: 1, layer: 'dense_1' }, plan: plan('pp2-dp1', (p) => (p.stages[1].layers = ['dense_1', 'logits'])) },
  { code: 'layer-unassigned', severity: 'error', where: { layer: 'dense_2' }, plan: plan('pp2-dp1', (p) => (p.stages[1].layers = ['logits'])) },
  { code: 'stage-order', severity: 'error', where: { stage: 0, layer: 'dense_2' }, plan: plan('pp2-dp1', (p) => ((p.stages[0].layers = ['input', 'dense_2']), (p.stages[1].layers = ['dense_1', 'logits']))) },
  { code: 'batch-indivisible', severity: 'error', where: { stage: 0, field: 'globalBatch' }, plan: plan('pp2-dp2', (p) => (p.globalBatch = 30)) },
  { code: 'batch-indivisible', severity: 'error', where: { field: 'globalBatch' }, plan: plan('pp1-dp2', (p) => (p.virtualNodes = { total: 3, perReplica: [2, 1] })) },
  { code: 'virtual-nodes-sum', severity: 'error', where: { field: 'virtualNodes.perReplica' }, plan: plan('pp1-dp2', (p) => (p.virtualNodes = { total: 4, perReplica: [1, 2] })) },
  { code: 'virtual-nodes-count', severity: 'error', where: { stage: 0, field: 'virtualNodes.perReplica' }, plan: plan('pp1-dp2', (p) => (p.virtualNodes = { total: 4, perReplica: [1, 1, 2] })) },
  { code: 'virtual-nodes-too-few', severity: 'error', where: { stage: 0, field: 'virtualNodes.total' }, plan: plan('pp1-dp4', (p) => (p.virtualNodes = { total: 2 })) },
  { code: 'device-group-size', severity: 'error', where: { stage: 0, field: 'devices' }, plan: plan('pp1-dp2', (p) => (p.stages[0].devices = [0])) },
  { code: 'too-few-agents', severity: 'error', where: { field: 'stages' }, plan: plan('pp2-dp2'), cluster: localClusterSpec(3) },
  // A plan built in code (parsePlan refuses it earlier): refused before one placement per rank is made.
  { code: 'too-many-agents', severity: 'error', where: { field: 'stages' }, plan: plan('pp1-dp1', (p) => (p.stages[0].dataParallel = 2 ** 31)) },
  { code: 'device-out-of-range', severity: 'error', where: { stage: 0, device: 9, field: 'devices' }, plan: plan('pp1-dp2', (p) => (p.stages[0].devices = [0, 9])), cluster: localClusterSpec(4) },
  // Stage 1 has no group, so its rank 1 runs on device 1, which stage 0 already uses.
  { code: 'device-shared', severity: 'error', where: { stage: 1, device: 1, field: 'devices' }, plan: plan('pp2-dp1', (p) => (p.stages[0].devices = [1])), cluster: localClusterSpec(4) },
  { code: 'device-shared', severity: 'error', where: { stage: 0, device: 3, field: 'devices' }, plan: plan('pp1-dp2', (p) => (p.stages[0].devices = [3, 3])) },
  { code: 'sharding-unknown-layer', severity: 'error', where: { layer: 'ghost', field: 'sharding' }, plan: plan('pp1-dp1', (p) => (p.sharding = { ghost: { weight: 'S(1)' } })) },
  { code: 'sharding-without-tensor-degree', severity: 'warning', where: { stage: 0, layer: 'dense_1', field: 'sharding' }, plan: plan('pp1-dp1', (p) => (p.sharding = { dense_1: { weight: 'S(1)' } })) },
  { code: 'sharding-no-weight', severity: 'error', where: { stage: 0, layer: 'input', field: 'sharding.weight' }, plan: plan('pp1-dp1', (p) => (tensor(2)(p), (p.sharding = { input: { weight: 'S(0)' } }))) },
  { code: 'sharding-unsupported-layer', severity: 'error', where: { stage: 0, layer: 'dense_2', field: 'sharding.weight' }, plan: plan('pp1-dp1', (p) => (tensor(2)(p), (p.sharding = { dense_2: { weight: 'S(1)' } }))), model: opaque },
  { code: 'split-axis-missing', severity: 'error', where: { stage: 0, layer: 'dense_1', field: 'sharding.weight' }, plan: plan('pp1-dp1', (p) => (tensor(2)(p), (p.sharding = { dense_1: { weight: 'S(2)' } }))) },
  { code: 'split-axis-missing', severity: 'error', where: { stage: 0, layer: 'dense_1', field: 'sharding.output' }, plan: plan('pp1-dp1', (p) => (tensor(2)(p), (p.sharding = { dense_1: { weight: 'S(1)', output: 'S(2)' } }))) },
  // Splitting a convolution's kernel height is not a sharding: only channels can be split.
  { code: 'split-axis-unsupported', severity: 'error', where: { stage: 0, layer: 'conv_1', field: 'sharding.weight' }, plan: plan('pp1-dp1', (p) => (tensor(2)(p), (p.sharding = { conv_1: { weight: 'S(0)' } })), cnn), model: cnn },
  // 10 classes do not split over 4 shards.
  { code: 'split-indivisible', severity: 'error', where: { stage: 0, layer: 'logits', field: 'sharding.weight' }, plan: plan('pp1-dp1', (p) => (tensor(4)(p), (p.sharding = { logits: { weight: 'S(1)' } }))) },
  // A micro-batch of 64 samples does not split over 3 shards.
  { code: 'split-indivisible', severity: 'error', where: { stage: 0, layer: 'dense_1', field: 'sharding.output' }, plan: plan('pp1-dp1', (p) => (tensor(3)(p), (p.sharding = { dense_1: { weight: 'B', output: 'S(0)' } }))) },
  { code: 'partial-without-contraction', severity: 'error', where: { stage: 0, layer: 'dense_1', field: 'sharding.output' }, plan: plan('pp1-dp1', (p) => (tensor(2)(p), (p.sharding = { dense_1: { weight: 'S(1)', output: 'P' } }))) },
  { code: 'tensor-unused', severity: 'warning', where: { stage: 0, field: 'tensorParallel' }, plan: plan('pp1-dp1', tensor(2)) },
  { code: 'async-single-stage', severity: 'warning', where: { field: 'schedule' }, plan: plan('pp1-dp1', (p) => (p.schedule = 'async')) },
  { code: 'async-stale-weights', severity: 'warning', where: { field: 'microBatches' }, plan: plan('pp4-dp1-m2', (p) => (p.schedule = 'async')) },
  { code: 'few-micro-batches', severity: 'warning', where: { field: 'microBatches' }, plan: plan('pp4-dp1-m2') },
  { code: 'zero-without-data-parallel', severity: 'warning', where: { field: 'zero' }, plan: plan('pp2-dp1', (p) => (p.zero = 2)) },
  { code: 'async-uneven-virtual-nodes', severity: 'error', where: { field: 'virtualNodes' }, plan: plan('pp1-dp2', (p) => { p.schedule = 'async'; p.virtualNodes = { total: 4, perReplica: [3, 1] }; }), execution: true },
  { code: 'zero-unsupported', severity: 'error', where: { field: 'zero' }, plan: plan('pp1-dp2', (p) => (p.zero = 3)), execution: true },
  { code: 'async-zero-unsupported', severity: 'error', where: { field: 'zero' }, plan: plan('pp2-dp2', (p) => ((p.schedule = 'async'), (p.zero = 1))), execution: true },
  { code: 'async-clipping-unsupported', severity: 'error', where: { field: 'gradientClipNorm' }, plan: plan('pp2-dp1', (p) => ((p.schedule = 'async'), (p.gradientClipNorm = 1))), execution: true },
  { code: 'unequal-data-parallel', severity: 'error', where: { stage: 1, field: 'dataParallel' }, plan: plan('pp2-dp2', (p) => (p.stages[1].dataParallel = 1)), execution: true },
  { code: 'async-tensor-unsupported', severity: 'error', where: { stage: 0, field: 'tensorParallel' }, plan: plan('pp2-dp1', (p) => ((p.schedule = 'async'), tensor(2)(p))), execution: true },
  { code: 'model-not-trainable', severity: 'error', where: {}, plan: plan('pp1-dp1', () => {}, zooModel('resnet18')), model: zooModel('resnet18'), execution: true },
  { code: 'layer-not-executable', severity: 'error', where: { layer: 'dense_2' }, plan: plan('pp1-dp1'), model: unknownLayer, execution: true },
  { code: 'layer-class-refused', severity: 'error', where: { layer: 'dense_2' }, plan: plan('pp1-dp1'), model: refusedClass, execution: true },
  { code: 'causal-padding-unsupported', severity: 'error', where: { layer: 'dense_2' }, plan: plan('pp1-dp1'), model: causalConv, execution: true },
  { code: 'shared-layer-split', severity: 'error', where: { layer: 'dense_1' }, plan: plan('pp2-dp1', (p) => (p.stages = [{ ...p.stages[0], layers: ['input', 'dense_1'] }, { ...p.stages[1], layers: ['dense_1@1', 'dense_3'] }]), shared), model: shared, execution: true },
  { code: 'tensor-layer-unsupported', severity: 'error', where: { stage: 0, layer: 'dense_2', field: 'tensorParallel' }, plan: plan('pp1-dp1', tensor(2)), model: batchNorm, execution: true },
  { code: 'tensor-layer-unsupported', severity: 'error', where: { layer: 'logits', field: 'sharding.weight' }, plan: plan('pp1-dp1', (p) => (tensor(2)(p), (p.sharding = { logits: { weight: 'S(1)' } })), softmaxHead), model: softmaxHead, execution: true },
  { code: 'tensor-layer-unsupported', severity: 'error', where: { layer: 'conv_1', field: 'sharding.weight' }, plan: plan('pp1-dp1', (p) => (p.sharding = { conv_1: { weight: 'S(3)' } }), cnn), model: cnn, execution: true },
];

describe('every diagnostic', () => {
  it.each(CASES.map((c) => [`${c.code} at ${JSON.stringify(c.where)}`, c] as const))('%s', (_, c) => {
    const found = c.execution ? executionSupport(c.plan, c.model ?? mlp) : validatePlan(c.plan, c.model ?? mlp, c.cluster);
    const match = found.find((d) => d.code === c.code && JSON.stringify(d.where) === JSON.stringify(c.where));
    expect(match, `got ${JSON.stringify(found.map((d) => [d.code, d.where]))}`).toBeDefined();
    expect(match?.severity).toBe(c.severity);
    expect(match?.message.length).toBeGreaterThan(20);
    expect(match?.hint).toMatch(/^[A-Z].{15,}\.$/);
  });

  it('has a case for every code the validators can emit', () => {
    const dir = join(__dirname, '..', '..', 'engine', 'plan');
    const emitted = new Set<string>();
    for (const file of readdirSync(dir)) {
      for (const m of readFileSync(join(dir, file), 'utf8').matchAll(/\.(?:error|warning)\(\s*'([a-z0-9-]+)'/g)) emitted.add(m[1]);
    }
    expect(emitted.size).toBeGreaterThan(25);
    expect([...new Set(CASES.map((c) => c.code))].sort()).toEqual([...emitted].sort());
  });
});

describe('whole plans', () => {
  it('a Megatron-style MLP with a class-sharded classifier is valid on Whale\'s cluster and runnable by the agents', () => {
    const whale = parseClusterSpec(JSON.parse(readFileSync(join(__dirname, '..', '..', 'examples', 'clusters', 'whale-64xv100.json'), 'utf8')));
    const p = plan('pp2-dp2', (q) => {
      q.stages[0] = { ...q.stages[0], tensorParallel: 2, devices: [0, 1, 8, 9] };
      q.stages[1] = { ...q.stages[1], tensorParallel: 2, devices: [2, 3, 10, 11] };
      // dense_1 column-parallel: S(1) weight leaves its output split by units; dense_2 row-parallel
      // sums partial outputs; logits class-parallel over the 10 classes.
      q.sharding = { dense_1: { weight: 'S(1)' }, dense_2: { weight: 'S(0)', output: 'B' }, logits: { weight: 'S(1)', output: 'S(1)' } };
      q.virtualNodes = { total: 4, perReplica: [3, 1] };
      q.zero = 1;
    });
    expect(validatePlan(p, mlp, whale)).toEqual([]);
    expect(executionSupport(p, mlp)).toEqual([]);
  });

  it('a plan only judged without a cluster skips device counts but still checks group sizes', () => {
    expect(validatePlan(plan('pp2-dp2'), mlp)).toEqual([]);
    expect(validatePlan(plan('pp2-dp2', (p) => (p.stages[0].devices = [100, 101])), mlp)).toEqual([]);
  });
});
