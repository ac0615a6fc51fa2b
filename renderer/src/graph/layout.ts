import ELK from 'elkjs/lib/elk-api';
import elkWorkerUrl from 'elkjs/lib/elk-worker.min.js?url';
import { layeredLayout, NODE_HEIGHT, NODE_WIDTH, STAGE_GAP, STAGE_TOP } from './layeredLayout';
import type { LayoutInput, LayoutResult } from './layeredLayout';

export { MIN_STAGE_WIDTH, NODE_HEIGHT, NODE_WIDTH, STAGE_TOP, stageBoxId } from './layeredLayout';
export type { Box, LaidEdge, LayoutInput, LayoutResult, Point } from './layeredLayout';

/**
 * The studio's layout: layeredLayout (top-down, stages as stacked swimlanes) computed by elkjs in a Web
 * Worker, so a big model never blocks the page.
 */
let elk: InstanceType<typeof ELK> | undefined;
const engine = () => (elk ??= new ELK({ workerUrl: elkWorkerUrl }));

export function layoutGraph(input: LayoutInput): Promise<LayoutResult> {
  return layeredLayout(input, (graph) => engine().layout(graph));
}

/** Used when the layout worker cannot run: one column, stages stacked, edges straight down. */
export function columnLayout(input: LayoutInput): LayoutResult {
  const result: LayoutResult = { stages: [], layers: [], edges: [], bounds: { x: 0, y: 0, width: NODE_WIDTH + 40, height: 0 } };
  const centre = new Map<string, number>();
  let y = 0;
  let current: LayoutResult['stages'][number] | undefined;
  for (const layer of input.layers) {
    const stage = input.stageOf.get(layer.id);
    if (stage !== current?.stage) {
      if (current) y += STAGE_GAP;
      current = stage === undefined ? undefined : { stage, x: 0, y, width: NODE_WIDTH + 40, height: STAGE_TOP };
      if (current) {
        result.stages.push(current);
        y += STAGE_TOP;
      }
    }
    if (current) {
      result.layers.push({ id: layer.id, x: 20, y: y - current.y, stage });
      current.height += NODE_HEIGHT + 20;
    } else result.layers.push({ id: layer.id, x: 20, y });
    centre.set(layer.id, y);
    for (const from of layer.inputs) {
      const top = centre.get(from);
      if (top !== undefined) result.edges.push({ from, to: layer.id, lane: false, points: [{ x: 20 + NODE_WIDTH / 2, y: top + NODE_HEIGHT }, { x: 20 + NODE_WIDTH / 2, y }] });
    }
    y += NODE_HEIGHT + 20;
  }
  result.bounds.height = y;
  return result;
}

/**
 * Start the worker and run elk once on a small graph with a skip edge when the graph view loads: elk's
 * first layout in a fresh worker loads and compiles its code, which takes seconds on a loaded machine;
 * better while the studio connects than when the first model opens.
 */
export function warmLayout(): void {
  const layers = ['a', 'b', 'c'].map((id, i, all) => ({ id, inputs: all.slice(0, i) }));
  void layoutGraph({ layers, stageOf: new Map() }).catch(() => undefined);
}
