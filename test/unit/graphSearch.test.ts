import { describe, expect, it } from 'vitest';
import { zooModel } from '../../engine/model/zoo';
import { canCollapse, CHUNK, groupsOf, viewGraph } from '../../renderer/src/graph/collapse';
import { readModelFile } from '../../renderer/src/model/readModelFile';
import { syntheticKerasModel } from '../../bench/lib/syntheticKeras';
import { searchLayers, stepHit } from '../../renderer/src/graph/search';

/** Finding layers on the drawn graph by id or kind, through folded blocks too. */
describe('graph search', () => {
  const mlp = zooModel('mlp');
  const flat = viewGraph(mlp, new Map(), false).nodes;

  it('finds layers by id and by kind, case-insensitive, in graph order', () => {
    expect(searchLayers(flat, 'DENSE_2').map((h) => h.layerId)).toEqual(['dense_2']);
    const dense = searchLayers(flat, 'dense').map((h) => h.layerId);
    expect(dense.length).toBeGreaterThanOrEqual(2);
    expect(dense).toEqual(mlp.layers.filter((l) => l.id.includes('dense') || l.spec.kind === 'dense').map((l) => l.id));
    expect(searchLayers(flat, '  ')).toEqual([]);
    expect(searchLayers(flat, 'no-such-layer')).toEqual([]);
  });

  it('puts an exact id first and needs every word', () => {
    const layers = mlp.layers.map((l) => l.id);
    const last = layers[layers.length - 1];
    expect(searchLayers(flat, last)[0].layerId).toBe(last);
    const kind = mlp.layers[1].spec.kind;
    expect(searchLayers(flat, `${mlp.layers[1].id} ${kind}`).map((h) => h.layerId)).toEqual([mlp.layers[1].id]);
  });

  it('finds a layer inside a folded block through the block', () => {
    const model = zooModel('resnet18');
    const folded = viewGraph(model, new Map(), true).nodes;
    const inner = model.layers.find((l) => l.group !== undefined)!;
    const hit = searchLayers(folded, inner.id).find((h) => h.layerId === inner.id)!;
    expect(hit.viewId).not.toBe(inner.id);
    expect(folded.find((n) => n.id === hit.viewId)?.kind).toBe('block');
  });

  it('steps through matches, wrapping both ways', () => {
    expect(stepHit(-1, 3, 1)).toBe(0);
    expect(stepHit(-1, 3, -1)).toBe(2);
    expect(stepHit(2, 3, 1)).toBe(0);
    expect(stepHit(0, 3, -1)).toBe(2);
    expect(stepHit(0, 0, 1)).toBe(-1);
  });
});

describe('folding a big ungrouped model', () => {
  const read = (layers: number) => {
    const result = readModelFile('m.json', syntheticKerasModel(layers));
    if (!result.ok) throw new Error(result.problem.what);
    return result.graph;
  };

  it('leaves a small one alone and keeps a model\'s own groups', () => {
    const small = read(150);
    expect(canCollapse(small)).toBe(false);
    expect(groupsOf(small).every((g) => g === undefined)).toBe(true);
    const resnet = zooModel('resnet18');
    expect(groupsOf(resnet)).toEqual(resnet.layers.map((l) => l.group));
  });

  it('folds 1,000 layers into runs of consecutive layers, split where stages split', () => {
    const model = read(1000);
    expect(canCollapse(model)).toBe(true);
    const groups = groupsOf(model);
    expect(groups[0]).toBe(`layers 1–${CHUNK}`);
    expect(groups[999]).toBe(`layers 981–1000`);
    expect(viewGraph(model, new Map(), true).nodes).toHaveLength(1000 / CHUNK);
    // A stage boundary inside a run cuts it in two blocks.
    const stageOf = new Map(model.layers.map((l, i) => [l.id, i < 510 ? 0 : 1]));
    const view = viewGraph(model, stageOf, true);
    expect(view.nodes).toHaveLength(1000 / CHUNK + 1);
    expect(view.nodes.reduce((n, node) => n + (node.kind === 'block' ? node.layers.length : 1), 0)).toBe(1000);
    expect(searchLayers(view.nodes, 'logits')[0].viewId).toBe(`block:layers 981–1000@1`);
  });
});
