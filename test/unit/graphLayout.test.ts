import ELK from 'elkjs/lib/elk.bundled.js';
import { describe, expect, it } from 'vitest';
import { zooModel } from '../../engine/model/zoo';
import { chainElk, elkGraph, fromElk, layeredLayout, NODE_HEIGHT, NODE_WIDTH } from '../../renderer/src/graph/layeredLayout';
import type { LayoutInput, LayoutResult } from '../../renderer/src/graph/layeredLayout';

/**
 * The graph view's layout (renderer/src/graph/layeredLayout.ts) with the real elk, in process: top-down
 * order (every edge goes down, or sideways in a skip lane and then down), orthogonal routing, a straight
 * main path with residuals beside it, and stage frames that never overlap.
 */
const elk = new ELK();
const run = (input: LayoutInput) => layeredLayout(input, (graph) => elk.layout(graph));

/** Absolute boxes of every layer. */
function boxes(result: LayoutResult) {
  const frames = new Map(result.stages.map((s) => [s.stage, s]));
  return new Map(
    result.layers.map((l) => {
      const frame = l.stage === undefined ? undefined : frames.get(l.stage);
      return [l.id, { x: l.x + (frame?.x ?? 0), y: l.y + (frame?.y ?? 0), stage: l.stage }];
    }),
  );
}

function expectTopDown(input: LayoutInput, result: LayoutResult): void {
  const at = boxes(result);
  const expected = input.layers.flatMap((l) => l.inputs.map((from) => `${from}->${l.id}`)).sort();
  expect(result.edges.map((e) => `${e.from}->${e.to}`).sort()).toEqual(expected);
  for (const edge of result.edges) {
    const [a, b] = [at.get(edge.from)!, at.get(edge.to)!];
    // The target sits below the source: the graph reads top to bottom.
    expect(b.y, `${edge.from} -> ${edge.to}`).toBeGreaterThanOrEqual(a.y + NODE_HEIGHT);
    const [first, last] = [edge.points[0], edge.points[edge.points.length - 1]];
    for (const [p, q] of edge.points.slice(1).map((q, i) => [edge.points[i], q])) {
      // Orthogonal: each segment is horizontal or vertical, and no segment climbs.
      expect(Math.abs(p.x - q.x) < 0.01 || Math.abs(p.y - q.y) < 0.01, `${edge.from} -> ${edge.to} segment`).toBe(true);
      expect(q.y, `${edge.from} -> ${edge.to} goes down`).toBeGreaterThanOrEqual(p.y - 0.01);
    }
    if (edge.lane) {
      // A skip lane: out of the source's right side, down beside the bands, into the target's right side.
      expect(first).toEqual({ x: a.x + NODE_WIDTH, y: a.y + NODE_HEIGHT / 2 });
      expect(last).toEqual({ x: b.x + NODE_WIDTH, y: b.y + NODE_HEIGHT / 2 });
      expect(edge.points[1].x).toBeGreaterThan(Math.max(...[...at.values()].map((l) => l.x + NODE_WIDTH)));
    } else {
      // Out of the bottom port, into the top port.
      expect(first.y).toBeCloseTo(a.y + NODE_HEIGHT, 3);
      expect(first.x).toBeCloseTo(a.x + NODE_WIDTH / 2, 3);
      expect(last.y).toBeCloseTo(b.y, 3);
      expect(last.x).toBeCloseTo(b.x + NODE_WIDTH / 2, 3);
    }
  }
}

const disjoint = (a: { x: number; y: number; width: number; height: number }, b: typeof a) => a.x + a.width <= b.x || b.x + b.width <= a.x || a.y + a.height <= b.y || b.y + b.height <= a.y;

describe('graph layout', () => {
  it('draws a residual network top-down, the main path straight and each skip connection beside it', async () => {
    const model = zooModel('resnet18');
    const input = { layers: model.layers, stageOf: new Map<string, number>() };
    const result = await run(input);
    expectTopDown(input, result);
    expect(result.stages).toEqual([]);
    const at = boxes(result);
    // Every add has a residual input: the edge from the block's input passes beside, not through, the layers between.
    const adds = model.layers.filter((l) => l.inputs.length === 2);
    expect(adds.length).toBeGreaterThan(4);
    for (const add of adds) {
      const skip = add.inputs.map((from) => result.edges.find((e) => e.from === from && e.to === add.id)!);
      const [top, bottom] = [Math.min(...add.inputs.map((id) => at.get(id)!.y)), at.get(add.id)!.y];
      const between = [...at.values()].filter((b) => b.y > top && b.y < bottom);
      const beside = skip.filter((e) => e.points.every((p) => between.every((b) => p.x <= b.x || p.x >= b.x + NODE_WIDTH || p.y <= b.y || p.y >= b.y + NODE_HEIGHT)));
      expect(beside.length, `${add.id}: an input edge that crosses no layer`).toBeGreaterThan(0);
    }
    // The main path is one straight column: most layers share one x.
    const xs = [...at.values()].map((b) => Math.round(b.x));
    const column = Math.max(...[...new Set(xs)].map((x) => xs.filter((v) => v === x).length));
    expect(column / xs.length).toBeGreaterThan(0.6);
  });

  it('stacks pipeline stages as disjoint frames in pipeline order, each holding its layers', async () => {
    const model = zooModel('resnet18');
    const n = model.layers.length;
    // Three stages; the cuts fall inside residual blocks, so some edges skip past a stage's rows.
    const stageOf = new Map(model.layers.map((l, i) => [l.id, i < n / 3 + 1 ? 0 : i < (2 * n) / 3 + 2 ? 1 : 2]));
    const input = { layers: model.layers, stageOf };
    const result = await run(input);
    expectTopDown(input, result);
    expect(result.stages.map((s) => s.stage)).toEqual([0, 1, 2]);
    for (const [i, a] of result.stages.entries()) {
      for (const b of result.stages.slice(i + 1)) expect(disjoint(a, b), `stage ${a.stage} and ${b.stage}`).toBe(true);
      if (i > 0) expect(a.y).toBeGreaterThan(result.stages[i - 1].y + result.stages[i - 1].height);
    }
    for (const layer of result.layers) {
      expect(layer.stage).toBe(stageOf.get(layer.id));
      const frame = result.stages.find((s) => s.stage === layer.stage)!;
      expect(layer.x).toBeGreaterThanOrEqual(0);
      expect(layer.y).toBeGreaterThanOrEqual(0);
      expect(layer.x + NODE_WIDTH).toBeLessThanOrEqual(frame.width);
      expect(layer.y + NODE_HEIGHT).toBeLessThanOrEqual(frame.height);
    }
    expect(result.edges.some((e) => e.lane)).toBe(true);
    expect(result.bounds.height).toBeGreaterThanOrEqual(result.stages[2].y + result.stages[2].height);
  });

  it('lays a chain out without elk exactly as elk does; a graph with a branch goes to elk', async () => {
    const layers = Array.from({ length: 7 }, (_, i) => ({ id: `l${i}`, inputs: i ? [`l${i - 1}`] : [] }));
    const input = { layers, stageOf: new Map(layers.map((l, i) => [l.id, i < 3 ? 0 : 1])) };
    const graph = elkGraph(input);
    const round = (r: ReturnType<typeof fromElk>) => JSON.parse(JSON.stringify(r, (_, v: unknown) => (typeof v === 'number' ? Math.round(v) : v))) as unknown;
    expect(round(fromElk(input, chainElk(graph)!))).toEqual(round(fromElk(input, await elk.layout(elkGraph(input)))));
    const branched = { layers: [...layers, { id: 'skip', inputs: ['l0', 'l2'] }], stageOf: new Map<string, number>() };
    expect(chainElk(elkGraph(branched))).toBeUndefined();
  });

  it('lays out a 1,000-layer chain in one column with the stage cut straight down', async () => {
    const layers = Array.from({ length: 1000 }, (_, i) => ({ id: `l${i}`, inputs: i ? [`l${i - 1}`] : [] }));
    const stageOf = new Map(layers.map((l, i) => [l.id, i < 500 ? 0 : 1]));
    const result = await run({ layers, stageOf });
    expectTopDown({ layers, stageOf }, result);
    const at = boxes(result);
    expect(new Set([...at.values()].map((b) => b.x)).size).toBe(1);
    expect(result.edges.filter((e) => e.lane)).toEqual([]);
  });
});
