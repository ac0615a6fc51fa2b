import { Background, Controls, ReactFlow, ReactFlowProvider, useReactFlow } from '@xyflow/react';
import type { Edge, NodeTypes } from '@xyflow/react';
import { useEffect, useMemo, useRef, useState } from 'react';
import type { ModelGraph } from '../../../engine/model/graph';
import { usePlan } from '../store/planState';
import { useStudio } from '../store/studioStore';
import { BlockNodeView } from './BlockNodeView';
import { canCollapse, COLLAPSE_ABOVE, viewGraph } from './collapse';
import { columnLayout, layoutGraph } from './layout';
import type { LayoutResult } from './layout';
import { LayerNodeView } from './LayerNodeView';
import { StageNodeView } from './StageNodeView';
import { toFlow } from './toFlow';
import type { FlowNode } from './toFlow';

const nodeTypes: NodeTypes = { layer: LayerNodeView, block: BlockNodeView, stage: StageNodeView };

function FlowCanvas({ nodes, edges, version }: { nodes: FlowNode[]; edges: Edge[]; version: number }) {
  const flow = useReactFlow();
  useEffect(() => {
    const frame = requestAnimationFrame(() => void flow.fitView({ padding: 0.12, maxZoom: 1.1 }));
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
      minZoom={0.05}
      onlyRenderVisibleElements
      fitView
    >
      <Background gap={24} size={1} />
      <Controls showInteractive={false} />
    </ReactFlow>
  );
}

interface LayoutState {
  result: LayoutResult;
  /** What the layout was computed for; a stale layout is never drawn. */
  key: string;
  version: number;
  note?: string;
}

/** The layer graph of the open model, laid out by elkjs and grouped into the plan's pipeline stages. */
export function GraphView() {
  const model = useStudio((s) => s.model);
  const { plan, stageOf } = usePlan();
  const [layout, setLayout] = useState<LayoutState>();
  const [fold, setFold] = useState<{ model: ModelGraph; folded: boolean }>();
  const panel = useRef<HTMLElement>(null);

  const foldable = !!model && canCollapse(model);
  const folded = foldable && (fold?.model === model ? fold.folded : model.layers.length > COLLAPSE_ABOVE);
  const view = useMemo(() => (model ? viewGraph(model, stageOf, folded) : undefined), [model, stageOf, folded]);
  const key = useMemo(() => (model && view ? `${model.name}|${folded}|${JSON.stringify([...view.stageOf.entries()])}` : ''), [model, view, folded]);

  useEffect(() => {
    if (!view) return;
    let cancelled = false;
    const size = panel.current;
    const input = { layers: view.nodes, stageOf: view.stageOf, aspectRatio: size && size.clientHeight > 0 ? size.clientWidth / size.clientHeight : undefined };
    layoutGraph(input).then(
      (result) => !cancelled && setLayout((prev) => ({ result, key, version: (prev?.version ?? 0) + 1 })),
      (error: unknown) =>
        !cancelled && setLayout((prev) => ({ result: columnLayout(input), key, version: (prev?.version ?? 0) + 1, note: `Layout worker failed (${String(error)}); showing a simple column.` })),
    );
    return () => {
      cancelled = true;
    };
    // `key` stands for the view's contents: re-layout only when what is drawn really changes.
  }, [key]);

  const flow = useMemo(() => {
    if (!model || !view || layout?.key !== key) return undefined;
    const params = new Map(model.layers.map((l) => [l.id, l.params]));
    return toFlow(view.nodes, plan, layout.result, (id) => params.get(id) ?? 0);
  }, [model, view, plan, layout, key]);

  return (
    <section ref={panel} className="graph panel" data-testid="graph" aria-label="Layer graph">
      {!model && <div className="empty">Pick a model to see its layers.</div>}
      {model && !flow && <div className="empty">Laying out {model.layers.length} layers…</div>}
      {flow && layout && (
        <ReactFlowProvider>
          <FlowCanvas nodes={flow.nodes} edges={flow.edges} version={layout.version} />
        </ReactFlowProvider>
      )}
      {foldable && (
        <button type="button" className="button button--small graph__fold" data-testid="graph-fold" aria-pressed={folded} onClick={() => setFold({ model, folded: !folded })}>
          {folded ? 'Show every layer' : 'Fold blocks'}
        </button>
      )}
      {layout?.note && <div className="graph__note">{layout.note}</div>}
    </section>
  );
}
