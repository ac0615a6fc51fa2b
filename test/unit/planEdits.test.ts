import { describe, expect, it } from 'vitest';
import { zooModel } from '../../engine/model/zoo.js';
import type { Plan } from '../../engine/plan/plan.js';
import { presetPlan } from '../../engine/plan/presets.js';
import { validatePlan } from '../../engine/plan/validate.js';
import { layerRange, mergeWithNext, moveLayers, setStageDegree, splitStageAt, type EditResult } from '../../renderer/src/editor/planEdits.js';

const cnn = zooModel('cnn');
const base = presetPlan(cnn, 'pp2-dp1');
const planOf = (r: EditResult): Plan => {
  if ('refused' in r) throw new Error(`refused: ${r.refused}`);
  return r.plan;
};
const valid = (plan: Plan) => expect(validatePlan(plan, cnn).filter((d) => d.severity === 'error')).toEqual([]);

/** The stage editor's edits are pure: they keep plans valid or refuse with a reason. */
describe('stage editor edits', () => {
  it('moves the tail of a stage to the next stage and the head back', () => {
    const tail = base.stages[0].layers.at(-1)!;
    const moved = planOf(moveLayers(base, [tail], 1));
    expect(moved.stages[1].layers[0]).toBe(tail);
    valid(moved);
    const back = planOf(moveLayers(moved, [tail], 0));
    expect(back.stages).toEqual(base.stages);
  });

  it('refuses moves that would break the graph order, saying what to select instead', () => {
    const middle = base.stages[0].layers[1];
    const refused = moveLayers(base, [middle], 1);
    expect('refused' in refused && refused.refused).toMatch(/Only the last layers of stage 0 can move to stage 1/);
    const far = presetPlan(cnn, 'pp3-dp1');
    expect('refused' in moveLayers(far, [far.stages[0].layers.at(-1)!], 2)).toBe(true);
  });

  it('moving a whole stage away removes it', () => {
    const all = base.stages[1].layers;
    const merged = planOf(moveLayers(base, all, 0));
    expect(merged.stages).toHaveLength(1);
    valid(merged);
  });

  it('split and merge are inverses, and degrees are validated', () => {
    const at = base.stages[0].layers[2];
    const split = planOf(splitStageAt(base, at));
    expect(split.stages).toHaveLength(3);
    valid(split);
    expect(planOf(mergeWithNext(split, 0)).stages.map((s) => s.layers)).toEqual(base.stages.map((s) => s.layers));
    expect('refused' in setStageDegree(base, 0, 'dataParallel', 0)).toBe(true);
    expect(planOf(setStageDegree(base, 1, 'dataParallel', 2)).stages[1].dataParallel).toBe(2);
  });

  it('shift-click ranges follow graph order either way', () => {
    expect(layerRange(cnn, 'pool_1', 'conv_1')).toEqual(['conv_1', 'pool_1']);
  });
});
