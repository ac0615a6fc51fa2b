import { MarkerType } from '@xyflow/react';
import type { Edge } from '@xyflow/react';
import type { Plan } from '../../../engine/plan/plan';
import type { PlanState } from '../store/planState';
import { stagePredictions } from '../store/stagePredictions';
import type { BlockFlowNode } from './BlockNodeView';
import type { ViewNode } from './collapse';
import type { LayerFlowNode } from './LayerNodeView';
import { NODE_HEIGHT, stageBoxId } from './layout';
import type { LayoutResult } from './layout';
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
}

/** Turn the drawn graph and its layout into xyflow nodes (stage boxes as parents) and edges. */
export function toFlow(view: ViewNode[], layout: LayoutResult, paramsOf: (layerId: string) => number, decor: Decorations): { nodes: FlowNode[]; edges: Edge[] } {
  const { state, selection, previewStageOf, found } = decor;
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
    const common = { id: pos.id, position: { x: pos.x, y: pos.y }, zIndex: 1, style: { pointerEvents: 'all' as const }, ...(pos.stage !== undefined ? { parentId: stageBoxId(pos.stage), extent: 'parent' as const } : {}) };
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
      : [{ ...common, type: 'block' as const, data: { group: node.group, layers: node.layers, ...decor } }];
  });
  // Absolute positions decide how an edge is drawn: down to a node below, else out right and in left
  // (into the next stage's column, or the next column of a wrapped stage).
  const boxes = new Map(layout.stages.map((b) => [b.stage, b]));
  const at = new Map(
    layout.layers.map((l) => {
      const box = l.stage === undefined ? undefined : boxes.get(l.stage);
      return [l.id, { x: l.x + (box?.x ?? 0), y: l.y + (box?.y ?? 0) }];
    }),
  );
  const edges: Edge[] = view.flatMap((node) =>
    node.inputs.map((from) => {
      const [a, b] = [at.get(from), at.get(node.id)];
      const sideways = !!a && !!b && b.y < a.y + NODE_HEIGHT;
      return {
        id: `${from}->${node.id}`,
        source: from,
        target: node.id,
        sourceHandle: sideways ? 'to-stage' : 'down',
        targetHandle: sideways ? 'from-stage' : 'up',
        markerEnd: { type: MarkerType.ArrowClosed },
        className: sideways ? 'edge--sideways' : undefined,
        zIndex: 2,
        // Edges are not interactive: no invisible wide hit path, which costs hit testing on every pointer move.
        interactionWidth: 0,
      };
    }),
  );
  return { nodes: [...stageNodes, ...drawn], edges };
}
