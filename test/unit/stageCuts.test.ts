import { describe, expect, it } from 'vitest';
import { stageFacts } from '../../engine/cost/stageFacts.js';
import { importKerasModel } from '../../engine/model/import/importKeras.js';
import { stageCuts } from '../../engine/model/stageCuts.js';
import { presetPlan } from '../../engine/plan/presets.js';
import { resnetBlock, tf, twoInTwoOut } from '../support/userModels.js';

/** A functional model's graph, imported as the studio and the CLI import it. */
function graphOf(model: { toJSON(unused?: null, returnString?: boolean): unknown }) {
  return importKerasModel({ modelTopology: model.toJSON(null, false) }).graph;
}

describe('what crosses a pipeline cut', () => {
  it('a skip connection over a whole stage travels through it: the agents send it, the cost model prices it', async () => {
    await tf.setBackend('cpu');
    const graph = graphOf(resnetBlock());
    const stages = [['image', 'stem', 'bn', 'relu'], ['conv'], ['add', 'pool', 'head']];
    const cuts = stageCuts(graph, stages);
    expect(cuts.incoming).toEqual([['image'], ['relu'], ['relu', 'conv']]);
    expect(cuts.outgoing).toEqual([['relu'], ['relu', 'conv'], ['head']]);
    const plan = { ...presetPlan(graph, 'pp1-dp1'), stages: stages.map((layers) => ({ layers, dataParallel: 1, tensorParallel: 1 })) };
    const bytes = (id: string) => graph.layers.find((l) => l.id === id)!.activationBytes;
    expect(stageFacts(graph, plan, 1).liveInBytes).toBe(bytes('relu'));
    expect(stageFacts(graph, plan, 1).liveOutBytes).toBe(bytes('relu') + bytes('conv'));
    expect(stageFacts(graph, plan, 2).liveInBytes).toBe(bytes('relu') + bytes('conv'));
    expect(stageFacts(graph, plan, 0).liveInBytes).toBe(0);
    expect(stageFacts(graph, plan, 2).liveOutBytes).toBe(0);
  });

  it('data for a later stage crosses from the first, and outputs made early travel to the last', async () => {
    await tf.setBackend('cpu');
    const graph = graphOf(twoInTwoOut());
    const order = graph.layers.map((l) => l.id);
    // Cut right after "hidden": the regression head "reg" and the classifier path come later.
    const at = order.indexOf('hidden') + 1;
    const cuts = stageCuts(graph, [order.slice(0, at), order.slice(at)]);
    expect(cuts.incoming[0].sort()).toEqual(['a', 'b']);
    expect(cuts.outgoing[0]).toEqual(['hidden']);
    expect(cuts.outgoing[1]).toEqual(graph.outputs);
    // "reg" computed in stage 0 is a model output: it must reach the last stage.
    const early = [...order.slice(0, at), 'reg'];
    const late = order.filter((id) => !early.includes(id));
    const moved = stageCuts({ ...graph, layers: [...graph.layers.filter((l) => early.includes(l.id)), ...graph.layers.filter((l) => late.includes(l.id))] }, [early, late]);
    expect(moved.outgoing[0].sort()).toEqual(['hidden', 'reg']);
  });
});
