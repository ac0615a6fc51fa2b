import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { localClusterSpec } from '../../engine/cluster/cluster.js';
import { parseClusterSpec } from '../../engine/cluster/parseClusterSpec.js';
import type { ClusterSpec } from '../../engine/cluster/spec.js';
import { costOfPlan } from '../../engine/cost/costOfPlan.js';
import type { ModelGraph } from '../../engine/model/graph.js';
import { zooModel } from '../../engine/model/zoo.js';
import { hasErrors } from '../../engine/plan/diagnostics.js';
import { presetPlan } from '../../engine/plan/presets.js';
import { validatePlan } from '../../engine/plan/validate.js';
import { suggestPlans } from '../../engine/planner/suggestPlans.js';

const root = join(__dirname, '..', '..');
const example = (name: string): ClusterSpec => parseClusterSpec(JSON.parse(readFileSync(join(root, 'examples/clusters', name), 'utf8')));

/** `hosts` hosts of `per` devices of one preset, NVLink inside, `gbps` between hosts. */
function cluster(hosts: number, per: number, preset: string, gbps: number, memoryBytes?: number): ClusterSpec {
  return parseClusterSpec({
    name: `${hosts}x${per}-${preset}`,
    hosts: Array.from({ length: hosts }, (_, h) => ({ name: `h${h}`, devices: [{ preset, count: per, ...(memoryBytes ? { memoryBytes } : {}) }] })),
    links: { intraHost: { alpha: 5e-6, beta: 1.3e11 }, interHost: { alpha: 2.5e-5, beta: (gbps * 1e9) / 8 } },
  });
}

function expectSound(model: ModelGraph, spec: ClusterSpec, plans: ReturnType<typeof suggestPlans>['suggestions']): void {
  expect(plans.length).toBeGreaterThan(0);
  for (const s of plans) {
    expect(hasErrors(validatePlan(s.plan, model, spec)), JSON.stringify(validatePlan(s.plan, model, spec))).toBe(false);
    expect(costOfPlan(s.plan, model, spec).fits).toBe(true);
    expect(s.predicted.peakMemoryBytes).toHaveLength(spec.devices.length);
    expect(s.rationale).not.toMatch(/\n/);
    expect(s.rationale.length).toBeGreaterThan(10);
  }
}

describe('suggestPlans: quality against the exhaustive search', () => {
  const cases: Array<[string, string, ClusterSpec, number?]> = [
    ['mlp on local:4', 'mlp', localClusterSpec(4)],
    ['resnet18 on 2 × 8 A100', 'resnet18', example('dgx-a100-2x8.json')],
    ['bert-base on 8 V100, one host', 'bert-base', cluster(1, 8, 'v100-32gb', 100), 64],
    ['vgg16 on 2 × 4 RTX 3090 at 10 Gb/s', 'vgg16', cluster(2, 4, 'rtx-3090', 10)],
    ['resnet50 on the mixed V100 / T4 cluster', 'resnet50', example('hetero-v100-t4.json')],
  ];
  for (const [name, modelName, spec, globalBatch] of cases) {
    it(`${name}: top plan within 3% of the exhaustive best, every suggestion valid and fitting`, () => {
      const model = zooModel(modelName);
      const fast = suggestPlans(model, spec, { top: 3, globalBatch });
      const full = suggestPlans(model, spec, { top: 1, globalBatch, exhaustive: true });
      expectSound(model, spec, fast.suggestions);
      expectSound(model, spec, full.suggestions);
      expect(full.evaluated).toBeGreaterThanOrEqual(fast.suggestions.length);
      expect(fast.suggestions[0].predicted.stepTimeMs).toBeLessThanOrEqual(1.03 * full.suggestions[0].predicted.stepTimeMs);
      // Ranked fastest first.
      const times = fast.suggestions.map((s) => s.predicted.stepTimeMs);
      expect([...times].sort((a, b) => a - b)).toEqual(times);
    });
  }
});

describe('suggestPlans: what it chooses', () => {
  it("resnet50-100k on Whale's 64 V100s: shards the 100k-class layer over the classes and beats pure data parallel", () => {
    const model = zooModel('resnet50-100k');
    const whale = example('whale-64xv100.json');
    const { suggestions } = suggestPlans(model, whale, { top: 3 });
    expectSound(model, whale, suggestions);
    const best = suggestions[0];
    expect(best.plan.sharding.predictions).toEqual({ weight: 'S(1)' });
    const stage = best.plan.stages.find((s) => s.layers.includes('predictions'))!;
    expect(stage.tensorParallel).toBeGreaterThan(1);
    expect(best.rationale).toMatch(/100k-class layer/);
    const pureDp = costOfPlan(presetPlan(model, 'pp1-dp64', { globalBatch: best.plan.globalBatch, microBatches: 1 }), model, whale);
    expect(best.predicted.stepTimeMs).toBeLessThan(pureDp.stepMs);
  });

  it('when pure data parallel does not fit, picks ZeRO, a pipeline or accumulation that does', () => {
    // gpt2-medium's 355M parameters need 5.7 GB of fp32 Adam state per replica: too much for 6 GiB devices.
    const model = zooModel('gpt2-medium');
    const small = cluster(2, 4, 'v100-16gb', 25, 6 * 2 ** 30);
    for (const m of [1, 2, 4]) {
      const dp = presetPlan(model, 'pp1-dp8', { globalBatch: 32, microBatches: m });
      expect(costOfPlan(dp, model, small).fits).toBe(false);
    }
    const { suggestions } = suggestPlans(model, small, { top: 5, globalBatch: 32 });
    expectSound(model, small, suggestions);
    for (const s of suggestions) {
      const p = s.plan;
      expect(p.zero > 0 || p.stages.length > 1 || p.stages[0].tensorParallel > 1).toBe(true);
    }
  });

  it('returns no suggestion rather than one that does not fit', () => {
    const tiny = cluster(1, 2, 'v100-16gb', 25, 2 ** 28);
    expect(suggestPlans(zooModel('gpt2-xl'), tiny, { globalBatch: 8 }).suggestions).toEqual([]);
  });

  it('on a mixed cluster, gives faster devices more virtual nodes (VirtualFlow)', () => {
    const model = zooModel('resnet50');
    const mixed = example('hetero-v100-t4.json');
    const { suggestions } = suggestPlans(model, mixed, { top: 12 });
    expectSound(model, mixed, suggestions);
    const withVn = suggestions.filter((s) => s.plan.virtualNodes?.perReplica);
    expect(withVn.length).toBeGreaterThan(0);
    for (const s of withVn) {
      const per = s.plan.virtualNodes!.perReplica!;
      const stage = s.plan.stages[0];
      const speedOf = (r: number) => mixed.devices[stage.devices![r * stage.tensorParallel]].flops.fp32;
      for (let a = 0; a < per.length; a++) {
        for (let b = 0; b < per.length; b++) if (speedOf(a) > speedOf(b)) expect(per[a]).toBeGreaterThan(per[b]);
      }
      expect(s.rationale).toMatch(/virtual nodes/);
    }
  });

  it('keeps tensor-parallel groups inside one host', () => {
    const model = zooModel('resnet50-100k');
    const whale = example('whale-64xv100.json');
    for (const s of suggestPlans(model, whale, { top: 5 }).suggestions) {
      for (const stage of s.plan.stages) {
        for (let r = 0; r < stage.dataParallel; r++) {
          const hosts = new Set(stage.devices!.slice(r * stage.tensorParallel, (r + 1) * stage.tensorParallel).map((d) => whale.devices[d].host));
          expect(hosts.size).toBe(1);
        }
      }
    }
  });

  it('reports progress and counts what it evaluated', () => {
    const seen: number[] = [];
    const result = suggestPlans(zooModel('cnn'), localClusterSpec(4), { onProgress: (done, total) => seen.push(done / total) });
    expect(result.evaluated).toBeGreaterThan(0);
    expect(seen[seen.length - 1]).toBe(1);
    expect(result.searchMs).toBeGreaterThanOrEqual(0);
  });
});
