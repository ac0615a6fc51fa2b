import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { localClusterSpec } from '../../engine/cluster/cluster.js';
import { parseClusterSpec } from '../../engine/cluster/parseClusterSpec.js';
import type { ClusterSpec } from '../../engine/cluster/spec.js';
import { costOfPlan } from '../../engine/cost/costOfPlan.js';
import type { CostOptions } from '../../engine/cost/planCost.js';
import { zooModel } from '../../engine/model/zoo.js';
import { DEFAULT_OPTIMIZER } from '../../engine/plan/presets.js';
import { buildPlan, knobChoices } from '../../engine/planner/buildPlan.js';
import { deviceView } from '../../engine/planner/deviceOrder.js';
import { enumerateLayouts } from '../../engine/planner/enumerateLayouts.js';
import { StepEstimator } from '../../engine/planner/estimateStep.js';
import { graphFacts } from '../../engine/planner/graphFacts.js';

const example = (name: string): ClusterSpec => parseClusterSpec(JSON.parse(readFileSync(join(__dirname, '..', '..', 'examples/clusters', name), 'utf8')));

/**
 * The planner ranks candidates with StepEstimator, a fast restatement of costOfPlan. If the two drift
 * apart (costOfPlan learns something new), the planner's shortlist stops containing the true best:
 * this test says so before the quality benchmark does.
 */
describe('StepEstimator agrees with costOfPlan', () => {
  const cases: Array<[string, ClusterSpec, number, CostOptions]> = [
    ['resnet50-100k', example('whale-64xv100.json'), 2048, {}],
    ['bert-base', example('dgx-a100-2x8.json'), 128, { precision: 'mixed' }],
    ['resnet50', example('hetero-v100-t4.json'), 512, {}],
    ['mlp', localClusterSpec(4), 64, { allReduceBucketBytes: 0 }],
  ];
  for (const [name, cluster, globalBatch, cost] of cases) {
    it(`${name} on ${cluster.name}: same step time and fit on every 7th candidate`, () => {
      const model = zooModel(name);
      const view = deviceView(cluster, cost);
      const layouts = enumerateLayouts({ facts: graphFacts(model), view, devices: cluster.devices.length, globalBatch });
      const estimator = new StepEstimator(model, cluster, cost, view);
      const candidates = layouts.flatMap((layout) => knobChoices(layout, globalBatch, 32).map((knobs) => ({ layout, knobs })));
      expect(candidates.length).toBeGreaterThan(10);
      for (let i = 0; i < candidates.length; i += 7) {
        const { layout, knobs } = candidates[i];
        const plan = buildPlan(model, layout, knobs, { globalBatch, optimizer: DEFAULT_OPTIMIZER, seed: 1 });
        const estimate = estimator.estimate(plan, layout);
        const exact = costOfPlan(plan, model, cluster, cost);
        expect(estimate.fits).toBe(exact.fits);
        expect(estimate.stepMs).toBeCloseTo(exact.stepMs, 6);
      }
    });
  }
});
