import { Background, Controls, MarkerType, ReactFlow, ReactFlowProvider, useReactFlow } from '@xyflow/react';
import type { Edge, NodeTypes } from '@xyflow/react';
import { useEffect, useMemo, useRef, useState } from 'react';
import type { ModelGraph } from '../../../engine/model/graph';
import type { Plan } from '../../../engine/plan/plan';
import { usePlan } from '../store/planState';
import { useStudio } from '../store/studioStore';
import { columnLayout, layoutGraph, NODE_HEIGHT, stageBoxId } from './layout';
import type { LayoutResult } from './layout';
import { LayerNodeView } from './LayerNodeView';
import type { LayerFlowNode } from './LayerNodeView';
import { StageNodeView } from './StageNodeView';
import type { StageFlowNode } from './StageNodeView';

const nodeTypes: NodeTypes = { layer: LayerNodeView, stage: StageNodeView };

function toFlow(model: ModelGraph, plan: Plan | undefined, layout: LayoutResult): { nodes: Array<LayerFlowNode | StageFlowNode>; edges: Edge[] } {
  const byId = new Map(model.layers.map((l) => [l.id, l]));
  const stageNodes: StageFlowNode[] = layout.stages.map((box) => {
    const ids = plan?.stages[box.stage]?.layers ?? [];
    return {
      id: stageBoxId(box.stage),
      type: 'stage',
      position: { x: box.x, y: box.y },
      style: { width: box.width, height: box.height },
      data: { stage: box.stage, dataParallel: plan?.stages[box.stage]?.dataParallel ?? 1, layers: ids.length, params: ids.reduce((sum, id) => sum + (byId.get(id)?.params ?? 0), 0) },
      selectable: false,
      zIndex: 0,
    };
  });
  const layerNodes: LayerFlowNode[] = layout.layers.flatMap((pos) => {
    const layer = byId.get(pos.id);
    if (!layer) return [];
    const node: LayerFlowNode = { id: pos.id, type: 'layer', position: { x: pos.x, y: pos.y }, data: { layer, stage: pos.stage }, zIndex: 1 };
    if (pos.stage !== undefined) {
      node.parentId = stageBoxId(pos.stage);
      node.extent = 'parent';
    }
    return [node];
  });
  // Absolute positions decide how an edge is drawn: down to a layer below, else out right and in left
  // (into the next stage's column, or the next column of a wrapped stage).
  const boxes = new Map(layout.stages.map((b) => [b.stage, b]));
  const at = new Map(
    layout.layers.map((l) => {
      const box = l.stage === undefined ? undefined : boxes.get(l.stage);
      return [l.id, { x: l.x + (box?.x ?? 0), y: l.y + (box?.y ?? 0) }];
    }),
  );
  const edges: Edge[] = model.layers.flatMap((layer) =>
    layer.inputs.map((from) => {
      const [a, b] = [at.get(from), at.get(layer.id)];
      const sideways = !!a && !!b && b.y < a.y + NODE_HEIGHT;
      return {
        id: `${from}->${layer.id}`,
        source: from,
        target: layer.id,
        sourceHandle: sideways ? 'to-stage' : 'down',
        targetHandle: sideways ? 'from-stage' : 'up',
        markerEnd: { type: MarkerType.ArrowClosed },
        className: sideways ? 'edge--sideways' : undefined,
        zIndex: 2,
      };
    }),
  );
  return { nodes: [...stageNodes, ...layerNodes], edges };
}

function FlowCanvas({ nodes, edges, version }: { nodes: Array<LayerFlowNode | StageFlowNode>; edges: Edge[]; version: number }) {
  const flow = useReactFlow();
  useEffect(() => {
    const frame = requestAnimationFrame(() => void flow.fitView({ padding: 0.15, maxZoom: 1.1 }));
    return () => cancelAnimationFrame(frame);
  }, [flow, version]);
  return (
    <ReactFlow
      nodes={nodes}
      edges={edges}
      nodeTypes={nodeTypes}
      colorMode="dark"
      nodesDraggable={false}
      nodesConnectable={false}
      proOptions={{ hideAttribution: true }}
      minZoom={0.2}
      fitView
    >
      <Background gap={24} size={1} />
      <Controls showInteractive={false} />
    </ReactFlow>
  );
}

/** The layer graph of the open model, laid out by elkjs and grouped into the plan's pipeline stages. */
export function GraphView() {
  const model = useStudio((s) => s.model);
  const { plan, stageOf } = usePlan();
  const [layout, setLayout] = useState<{ result: LayoutResult; model: ModelGraph; version: number; note?: string }>();
  const stageKey = useMemo(() => JSON.stringify([...stageOf.entries()]), [stageOf]);
  const panel = useRef<HTMLElement>(null);

  useEffect(() => {
    if (!model) return;
    let cancelled = false;
    const size = panel.current;
    const input = { layers: model.layers, stageOf, aspectRatio: size && size.clientHeight > 0 ? size.clientWidth / size.clientHeight : undefined };
    layoutGraph(input).then(
      (result) => !cancelled && setLayout((prev) => ({ result, model, version: (prev?.version ?? 0) + 1 })),
      (error: unknown) =>
        !cancelled && setLayout((prev) => ({ result: columnLayout(input), model, version: (prev?.version ?? 0) + 1, note: `Layout worker failed (${String(error)}); showing a simple column.` })),
    );
    return () => {
      cancelled = true;
    };
    // stageKey stands for stageOf's contents: re-layout only when the assignment really changes.
  }, [model, stageKey]);

  const flow = useMemo(() => (model && layout?.model === model ? toFlow(model, plan, layout.result) : undefined), [model, plan, layout]);
  return (
    <section ref={panel} className="graph panel" data-testid="graph" aria-label="Layer graph">
      {!model && <div className="empty">Pick a model to see its layers.</div>}
      {model && !flow && <div className="empty">Laying out {model.layers.length} layers…</div>}
      {flow && layout && (
        <ReactFlowProvider>
          <FlowCanvas nodes={flow.nodes} edges={flow.edges} version={layout.version} />
        </ReactFlowProvider>
      )}
      {layout?.note && <div className="graph__note">{layout.note}</div>}
    </section>
  );
}
