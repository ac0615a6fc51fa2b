import { Background, Controls, ReactFlow, ReactFlowProvider, useReactFlow, useStore } from '@xyflow/react';
import type { NodeTypes } from '@xyflow/react';
import { useEffect, useMemo, useRef } from 'react';
import type { DragEvent, PointerEvent } from 'react';
import { moveTo } from '../editor/commands';
import { setSelection } from '../editor/editorStore';
import { DRAG_TYPE, draggedLayers } from '../editor/selection';
import { BlockNodeView } from './BlockNodeView';
import { EdgeLayer } from './EdgeLayer';
import { FAR_ZOOM, FarZoom } from './farZoom';
import { GraphMiniMap, miniPicture } from './GraphMiniMap';
import type { Box } from './layout';
import { LayerNodeView } from './LayerNodeView';
import { StageNodeView } from './StageNodeView';
import type { EdgePaths, FlowNode } from './toFlow';

const nodeTypes: NodeTypes = { layer: LayerNodeView, block: BlockNodeView, stage: StageNodeView };

interface Props {
  nodes: FlowNode[];
  edges: EdgePaths;
  /** The view is fitted when this changes (another model, folding, a stage added or removed). */
  fitKey: string;
  /** A new layout: fitted too, unless the user has panned or zoomed since the last fit. */
  version: number;
  stages: Array<Box & { stage: number }>;
  onDropTarget(stage: number | undefined): void;
  /** Centre the view on this point (flow coordinates) whenever `seq` changes: a search match. */
  focus?: { x: number; y: number; seq: number };
}

function Canvas({ nodes, edges, fitKey, version, stages, onDropTarget, focus }: Props) {
  const flow = useReactFlow();
  const far = useStore((s) => s.transform[2] < FAR_ZOOM);
  const picture = useMemo(() => (nodes.length > 60 ? miniPicture(nodes) : undefined), [nodes]);
  const target = useRef<number>(undefined);
  const userMoved = useRef(false);
  const fitted = useRef('');
  useEffect(() => {
    if (fitKey !== fitted.current) userMoved.current = false;
    fitted.current = fitKey;
    if (userMoved.current) return;
    const frame = requestAnimationFrame(() => void flow.fitView({ padding: 0.08, maxZoom: 1.1 }));
    return () => cancelAnimationFrame(frame);
  }, [flow, fitKey, version]);
  useEffect(() => {
    if (!focus) return;
    // The user asked for this view: a relayout must not fit it away.
    userMoved.current = true;
    void flow.setCenter(focus.x, focus.y, { zoom: Math.max(flow.getZoom(), 0.85), duration: 250 });
    // Only a new search step moves the view, not the point shifting under a relayout.
  }, [flow, focus?.seq]);
  // The panel shrinks when the monitor opens: keep the graph fitted while the user has not moved it.
  const box = useRef<HTMLDivElement>(null);
  useEffect(() => {
    const el = box.current;
    if (!el) return;
    let frame = 0;
    const observer = new ResizeObserver(() => {
      cancelAnimationFrame(frame);
      frame = requestAnimationFrame(() => !userMoved.current && void flow.fitView({ padding: 0.08, maxZoom: 1.1 }));
    });
    observer.observe(el);
    return () => {
      observer.disconnect();
      cancelAnimationFrame(frame);
    };
  }, [flow]);

  /** The stage box under the pointer, in flow coordinates. */
  const stageAt = (e: DragEvent) => {
    const p = flow.screenToFlowPosition({ x: e.clientX, y: e.clientY });
    return stages.find((b) => p.x >= b.x && p.x <= b.x + b.width && p.y >= b.y && p.y <= b.y + b.height)?.stage;
  };
  const setTarget = (stage: number | undefined) => {
    if (target.current === stage) return;
    target.current = stage;
    onDropTarget(stage);
  };
  const onDragOver = (e: DragEvent) => {
    if (!draggedLayers() && !e.dataTransfer.types.includes(DRAG_TYPE)) return;
    e.preventDefault();
    e.dataTransfer.dropEffect = 'move';
    setTarget(stageAt(e));
  };
  const onDrop = (e: DragEvent) => {
    e.preventDefault();
    setTarget(undefined);
    const raw = e.dataTransfer.getData(DRAG_TYPE);
    const ids = draggedLayers() ?? (raw ? (JSON.parse(raw) as string[]) : undefined);
    const stage = stageAt(e);
    if (ids && stage !== undefined) moveTo(ids, stage);
  };
  // A pan holds the pointer on the pane: otherwise the browser hit-tests every node under it on each move.
  const onPointerDown = (e: PointerEvent) => {
    if (e.target instanceof Element && e.target.classList.contains('react-flow__pane')) e.target.setPointerCapture(e.pointerId);
  };

  return (
    <div ref={box} className={`graph__canvas${far ? ' graph__canvas--far' : ''}`} onPointerDown={onPointerDown} onDragOver={onDragOver} onDrop={onDrop} onDragLeave={(e) => e.currentTarget === e.target && setTarget(undefined)}>
      <FarZoom.Provider value={far}>
        <ReactFlow
          nodes={nodes}
          nodeTypes={nodeTypes}
          colorMode="dark"
          nodesDraggable={false}
          nodesConnectable={false}
          elementsSelectable={false}
          proOptions={{ hideAttribution: true }}
          minZoom={0.05}
          onlyRenderVisibleElements={nodes.length > 300}
          onMoveStart={(event) => {
            if (event) userMoved.current = true;
            box.current?.classList.add('graph__canvas--moving');
          }}
          onMoveEnd={() => box.current?.classList.remove('graph__canvas--moving')}
          onPaneClick={() => setSelection([])}
          fitView
        >
          <EdgeLayer paths={edges} />
          {/* Zoomed far out the dots are finer than a pixel: noise that costs a repaint of the whole pane on every frame of a pan. */}
          {!far && <Background gap={24} size={1} />}
          <Controls showInteractive={false} />
          {picture && <GraphMiniMap picture={picture} onUserMove={() => (userMoved.current = true)} />}
        </ReactFlow>
      </FarZoom.Provider>
    </div>
  );
}

export function FlowCanvas(props: Props) {
  return (
    <ReactFlowProvider>
      <Canvas {...props} />
    </ReactFlowProvider>
  );
}
