import { describe, expect, it } from 'vitest';
import { zooModel } from '../../engine/model/zoo.js';
import { balanceCuts } from '../../engine/planner/balanceCuts.js';
import { graphFacts } from '../../engine/planner/graphFacts.js';
import { apportion } from '../../engine/planner/layout.js';

describe('planner building blocks', () => {
  it('balanceCuts: minimises the slowest stage, honouring per-stage speed and allowed cuts', () => {
    // Work 1..8 (+1 per layer inside balanceCuts): equal speeds give the classic balanced split.
    const work = [0, 1, 2, 3, 4, 5, 6, 7];
    const all = [1, 2, 3, 4, 5, 6, 7];
    expect(balanceCuts(work, all, [1, 1])).toEqual([0, 5, 8]);
    // A stage twice as fast takes about twice the work.
    expect(balanceCuts(work, all, [2, 1])).toEqual([0, 7, 8]);
    // Only one allowed cut: it is used whatever the balance.
    expect(balanceCuts(work, [2], [1, 1])).toEqual([0, 2, 8]);
    expect(balanceCuts(work, [2], [1, 1, 1])).toBeUndefined();
  });

  it('graphFacts: cuts only where one tensor is live, finds the wide classifier and Megatron pairs', () => {
    const resnet = graphFacts(zooModel('resnet50-100k'));
    const layers = resnet.layers;
    // No cut falls inside a residual block: the layer before each cut ends a block (its add or output) or the stem.
    for (const c of resnet.cuts) expect(layers[c - 1].id).toMatch(/(_out|_add|^input|stem_.*|avg_pool)$/);
    expect(layers[resnet.wideOutput].id).toBe('predictions');
    expect(graphFacts(zooModel('resnet50')).wideOutput).toBe(-1);
    const bert = graphFacts(zooModel('bert-base'));
    expect(bert.denseChains.map(([a, b]) => [bert.layers[a].id, bert.layers[b].id])).toContainEqual(['layer_0_ff1', 'layer_0_ff2']);
  });

  it('apportion: whole shares proportional to weight, at least one each, summing to the total', () => {
    expect(apportion(16, [3, 3, 1, 1])).toEqual([6, 6, 2, 2]);
    const shares = apportion(10, [5, 1, 1]);
    expect(shares.reduce((a, b) => a + b, 0)).toBe(10);
    expect(Math.min(...shares)).toBeGreaterThanOrEqual(1);
  });
});
