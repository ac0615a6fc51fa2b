import { MarkerType } from '@xyflow/react';
import type { Edge } from '@xyflow/react';
import type { Plan } from '../../../engine/plan/plan';
import type { BlockFlowNode } from './BlockNodeView';
import type { ViewNode } from './collapse';
import type { LayerFlowNode } from './LayerNodeView';
import { NODE_HEIGHT, stageBoxId } from './layout';
import type { LayoutResult } from './layout';
import type { StageFlowNode } from './StageNodeView';

export type FlowNode = LayerFlowNode | BlockFlowNode | StageFlowNode;

/** Turn the drawn graph and its layout into xyflow nodes (stage boxes as parents) and edges. */
export function toFlow(view: ViewNode[], plan: Plan | undefined, layout: LayoutResult, paramsOf: (layerId: string) => number): { nodes: FlowNode[]; edges: Edge[] } {
  const byId = new Map(view.map((n) => [n.id, n]));
  const stageNodes: StageFlowNode[] = layout.stages.map((box) => {
    const ids = plan?.stages[box.stage]?.layers ?? [];
    return {
      id: stageBoxId(box.stage),
      type: 'stage',
      position: { x: box.x, y: box.y },
      style: { width: box.width, height: box.height },
      data: { stage: box.stage, dataParallel: plan?.stages[box.stage]?.dataParallel ?? 1, layers: ids.length, params: ids.reduce((sum, id) => sum + paramsOf(id), 0) },
      selectable: false,
      zIndex: 0,
    };
  });
  const drawn = layout.layers.flatMap((pos): Array<LayerFlowNode | BlockFlowNode> => {
    const node = byId.get(pos.id);
    if (!node) return [];
    const common = { id: pos.id, position: { x: pos.x, y: pos.y }, zIndex: 1, ...(pos.stage !== undefined ? { parentId: stageBoxId(pos.stage), extent: 'parent' as const } : {}) };
    return node.kind === 'layer'
      ? [{ ...common, type: 'layer' as const, data: { layer: node.layer, stage: pos.stage } }]
      : [{ ...common, type: 'block' as const, data: { group: node.group, layers: node.layers, stage: pos.stage } }];
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
      };
    }),
  );
  return { nodes: [...stageNodes, ...drawn], edges };
}
