import ELK from 'elkjs/lib/elk-api';
import type { ElkNode } from 'elkjs/lib/elk-api';
import elkWorkerUrl from 'elkjs/lib/elk-worker.min.js?url';

/**
 * Layered, top-to-bottom layout of the layer graph, computed by elkjs in a Web Worker so a big model
 * never blocks the page. Layers of one pipeline stage are laid out top to bottom inside that stage's
 * box; the boxes follow the pipeline from left to right.
 */
export const NODE_WIDTH = 232;
export const NODE_HEIGHT = 76;
/** Room above a stage's first layer for its badge, prediction and first diagnostic. */
export const STAGE_TOP = 96;

export interface LayoutInput {
  layers: Array<{ id: string; inputs: string[] }>;
  /** Layer id → stage; layers without a stage are laid out at the top level. */
  stageOf: Map<string, number>;
  /** Width / height of the canvas: a stage with many layers wraps into columns to approach it. */
  aspectRatio?: number;
}

export interface Box {
  x: number;
  y: number;
  width: number;
  height: number;
}

export interface LayoutResult {
  /** Stage boxes, absolute. */
  stages: Array<Box & { stage: number }>;
  /** Layer positions: relative to their stage box when `stage` is set, else absolute. */
  layers: Array<{ id: string; x: number; y: number; stage?: number }>;
}

let elk: InstanceType<typeof ELK> | undefined;
const engine = () => (elk ??= new ELK({ workerUrl: elkWorkerUrl }));

export const stageBoxId = (stage: number) => `stage-${stage}`;

export async function layoutGraph(input: LayoutInput): Promise<LayoutResult> {
  const leaf = (id: string): ElkNode => ({ id, width: NODE_WIDTH, height: NODE_HEIGHT });
  const edge = (from: string, to: string) => ({ id: `${from}->${to}`, sources: [from], targets: [to] });
  const stages = [...new Set(input.stageOf.values())].sort((a, b) => a - b);
  const inner = { 'elk.algorithm': 'layered', 'elk.direction': 'DOWN', 'elk.layered.spacing.nodeNodeBetweenLayers': '36', 'elk.spacing.nodeNode': '28' };
  const aspect = Math.max(0.5, (input.aspectRatio ?? 1.6) / Math.max(1, stages.length));
  const wrap = { 'elk.layered.wrapping.strategy': 'MULTI_EDGE', 'elk.aspectRatio': aspect.toFixed(2) };
  // Each stage is a column laid out top to bottom; the columns follow the pipeline left to right.
  const children: ElkNode[] = stages.map((stage) => {
    const own = input.layers.filter((l) => input.stageOf.get(l.id) === stage);
    const ids = new Set(own.map((l) => l.id));
    return {
      id: stageBoxId(stage),
      layoutOptions: { ...inner, ...wrap, 'elk.padding': `[top=${STAGE_TOP},left=24,bottom=20,right=24]` },
      children: own.map((l) => leaf(l.id)),
      edges: own.flatMap((l) => l.inputs.filter((from) => ids.has(from)).map((from) => edge(from, l.id))),
    };
  });
  const loose = input.layers.filter((l) => !input.stageOf.has(l.id));
  children.push(...loose.map((l) => leaf(l.id)));
  const looseIds = new Set(loose.map((l) => l.id));
  const boxOf = (id: string) => (input.stageOf.has(id) ? stageBoxId(input.stageOf.get(id)!) : id);
  const rootEdges = new Map<string, { id: string; sources: string[]; targets: string[] }>();
  for (const layer of input.layers) {
    for (const from of layer.inputs) {
      const [a, b] = [boxOf(from), boxOf(layer.id)];
      if (a !== b || looseIds.has(layer.id)) rootEdges.set(`${a}->${b}`, edge(a, b));
    }
  }
  const graph: ElkNode = {
    id: 'root',
    layoutOptions: { ...inner, ...(stages.length > 0 ? { 'elk.direction': 'RIGHT' } : wrap), 'elk.layered.spacing.nodeNodeBetweenLayers': '56', 'elk.hierarchyHandling': 'SEPARATE_CHILDREN' },
    children,
    edges: [...rootEdges.values()].filter((e) => e.sources[0] !== e.targets[0]),
  };
  const out = await engine().layout(graph);
  const result: LayoutResult = { stages: [], layers: [] };
  for (const child of out.children ?? []) {
    const stage = stages.find((s) => stageBoxId(s) === child.id);
    if (stage === undefined) {
      result.layers.push({ id: child.id, x: child.x ?? 0, y: child.y ?? 0 });
      continue;
    }
    // Stage boxes share one top line (ELK would centre them on the edges between them), and a wrapped
    // stage loses the extra gap ELK leaves above its first row.
    const inside = child.children ?? [];
    const lift = Math.max(0, Math.min(...inside.map((l) => l.y ?? 0)) - STAGE_TOP);
    result.stages.push({ stage, x: child.x ?? 0, y: 0, width: child.width ?? 0, height: (child.height ?? 0) - lift });
    for (const layer of inside) result.layers.push({ id: layer.id, x: layer.x ?? 0, y: (layer.y ?? 0) - lift, stage });
  }
  return result;
}

/** Used when the layout worker cannot run: one column, stages stacked. */
export function columnLayout(input: LayoutInput): LayoutResult {
  const result: LayoutResult = { stages: [], layers: [] };
  let y = 0;
  let current: (Box & { stage: number }) | undefined;
  for (const layer of input.layers) {
    const stage = input.stageOf.get(layer.id);
    if (stage !== current?.stage) {
      if (current) y += 24;
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
    y += NODE_HEIGHT + 20;
  }
  return result;
}
