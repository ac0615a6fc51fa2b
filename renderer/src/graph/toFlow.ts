import type { Plan } from '../../../engine/plan/plan';
import type { PlanState } from '../store/planState';
import { stagePredictions } from '../store/stagePredictions';
import type { BlockFlowNode } from './BlockNodeView';
import type { ViewNode } from './collapse';
import type { LayerFlowNode } from './LayerNodeView';
import { NODE_HEIGHT, NODE_WIDTH, stageBoxId } from './layout';
import type { LayoutResult, Point } from './layout';
import type { StageFlowNode } from './StageNodeView';

export type FlowNode = LayerFlowNode | BlockFlowNode | StageFlowNode;

/** What the editor lays over the graph: the plan's state, the selection, a previewed plan, a drop target. */
export interface Decorations {
  state: PlanState;
  selection: Set<string>;
  /** Layer id → stage of a previewed suggestion, which colours the layers instead of the plan. */
  previewStageOf?: Map<string, number>;
  dropStage?: number;
  /** Search matches (drawn node ids) and the focused one. */
  found?: { matches: Set<string>; current?: string };
  /** Unfold a folded block's group (a double click on it). */
  onOpenBlock?(group: string): void;
}

/** Turn the drawn graph and its layout into xyflow nodes (stage boxes as parents). */
export function toFlow(view: ViewNode[], layout: LayoutResult, paramsOf: (layerId: string) => number, decor: Decorations): FlowNode[] {
  const { state, selection, previewStageOf, found, onOpenBlock } = decor;
  const plan: Plan | undefined = state.plan;
  const predictions = state.cost ? stagePredictions(state.cost) : [];
  const byId = new Map(view.map((n) => [n.id, n]));
  const stageNodes: StageFlowNode[] = layout.stages.map((box) => {
    const stage = plan?.stages[box.stage];
    const ids = stage?.layers ?? [];
    return {
      id: stageBoxId(box.stage),
      type: 'stage',
      position: { x: box.x, y: box.y },
      style: { width: box.width, height: box.height },
      data: {
        stage: box.stage,
        dataParallel: stage?.dataParallel ?? 1,
        tensorParallel: stage?.tensorParallel ?? 1,
        layers: ids.length,
        params: ids.reduce((sum, id) => sum + paramsOf(id), 0),
        prediction: predictions[box.stage],
        issues: state.byStage.get(box.stage) ?? [],
        dropTarget: decor.dropStage === box.stage,
      },
      selectable: false,
      zIndex: 0,
    };
  });
  const shown = (stage: number | undefined, ids: string[]) => (previewStageOf ? previewStageOf.get(ids[0]) : stage);
  const weight = (id: string) => {
    const w = plan?.sharding[id]?.weight;
    return w && w !== 'B' ? w : undefined;
  };
  const drawn = layout.layers.flatMap((pos): Array<LayerFlowNode | BlockFlowNode> => {
    const node = byId.get(pos.id);
    if (!node) return [];
    // xyflow gives nodes that are neither selectable nor draggable no pointer events; ours handle their own.
    // Their size is fixed and known: xyflow need not wait for a measurement to place or cull them.
    const common = { id: pos.id, position: { x: pos.x, y: pos.y }, width: NODE_WIDTH, height: NODE_HEIGHT, zIndex: 1, style: { pointerEvents: 'all' as const }, ...(pos.stage !== undefined ? { parentId: stageBoxId(pos.stage), extent: 'parent' as const } : {}) };
    const ids = node.kind === 'layer' ? [node.layer.id] : node.layers.map((l) => l.id);
    const decor = {
      stage: shown(pos.stage, ids),
      selected: ids.some((id) => selection.has(id)),
      issues: ids.flatMap((id) => state.byLayer.get(id) ?? []),
      sharding: node.kind === 'layer' ? weight(node.layer.id) : undefined,
      found: found?.current === pos.id ? ('current' as const) : found?.matches.has(pos.id) ? ('match' as const) : undefined,
    };
    return node.kind === 'layer'
      ? [{ ...common, type: 'layer' as const, data: { layer: node.layer, ...decor } }]
      : [{ ...common, type: 'block' as const, data: { group: node.group, layers: node.layers, onOpen: onOpenBlock, ...decor } }];
  });
  return [...stageNodes, ...drawn];
}

/** The edges of the graph as SVG paths in flow coordinates, for EdgeLayer. */
export interface EdgePaths {
  /** Edges routed by the layout along the graph, EDGE_GROUP to a path. */
  down: string[];
  /**
   * Edges in a lane beside the stages (they skip past another stage's rows), drawn dashed: one path
   * each, as dashing a path costs its whole length whatever part of it is drawn, and these are few but long.
   */
  sideways: string[];
  /** An arrowhead at the end of every edge, EDGE_GROUP to a path. */
  arrows: string[];
}

/**
 * Edges per path. One path for many edges is one item for the browser to layerize, which it does again
 * on every frame of a pan, instead of one per edge; a path for a few neighbouring edges (in graph order)
 * keeps its bounds small, so drawing a tile of the screen skips the paths that miss it.
 */
const EDGE_GROUP = 50;

/** Arrowheads as drawn by xyflow's closed arrow marker on a 1 px edge: 3 px long, 5 px wide. */
const ARROW_LENGTH = 3.2;
const ARROW_HALF_WIDTH = 2.5;

/** An arrowhead at `q`, pointing along the segment from `p`. */
function arrow(p: Point, q: Point): string {
  const length = Math.hypot(q.x - p.x, q.y - p.y) || 1;
  const [ux, uy] = [(q.x - p.x) / length, (q.y - p.y) / length];
  const [bx, by] = [q.x - ux * ARROW_LENGTH, q.y - uy * ARROW_LENGTH];
  return `M${bx - uy * ARROW_HALF_WIDTH},${by + ux * ARROW_HALF_WIDTH}L${q.x},${q.y}L${bx + uy * ARROW_HALF_WIDTH},${by - ux * ARROW_HALF_WIDTH}Z`;
}

/**
 * The edges' paths, as the layout routed them (orthogonal polylines): they change only when the layout
 * does, never with the selection, a search or the viewport.
 */
export function toEdges(layout: LayoutResult): EdgePaths {
  const down: string[] = [];
  const sideways: string[] = [];
  const arrows: string[] = [];
  for (const edge of layout.edges) {
    const points = edge.points;
    if (points.length < 2) continue;
    const d = `M${points.map((p) => `${p.x},${p.y}`).join('L')}`;
    (edge.lane ? sideways : down).push(d);
    arrows.push(arrow(points[points.length - 2], points[points.length - 1]));
  }
  return { down: grouped(down), sideways, arrows: grouped(arrows) };
}

function grouped(parts: string[]): string[] {
  const paths: string[] = [];
  for (let i = 0; i < parts.length; i += EDGE_GROUP) paths.push(parts.slice(i, i + EDGE_GROUP).join(''));
  return paths;
}
