import { Controls, ReactFlow, ReactFlowProvider, useReactFlow, useStore } from '@xyflow/react';
import type { NodeTypes } from '@xyflow/react';
import { useEffect, useMemo, useRef } from 'react';
import type { DragEvent, MouseEvent, PointerEvent } from 'react';
import { moveTo } from '../editor/commands';
import { setSelection, useEditor } from '../editor/editorStore';
import { DRAG_TYPE, draggedLayers } from '../editor/selection';
import { useShell } from '../shell/shellStore';
import { BlockNodeView } from './BlockNodeView';
import { EdgeLayer } from './EdgeLayer';
import { FAR_ZOOM, FarZoom } from './farZoom';
import { GraphMiniMap, miniPicture } from './GraphMiniMap';
import { inspect, unhover, useGraphUi } from './graphUi';
import { NODE_HEIGHT, NODE_WIDTH } from './layout';
import type { Box } from './layout';
import { LayerNodeView } from './LayerNodeView';
import { StageNodeView } from './StageNodeView';
import type { EdgePaths, FlowNode } from './toFlow';

const nodeTypes: NodeTypes = { layer: LayerNodeView, block: BlockNodeView, stage: StageNodeView };

/** Where to take the view (flow coordinates of a node's centre) whenever `seq` changes. */
export interface Focus {
  x: number;
  y: number;
  seq: number;
  /** 'zoom': centre it at a readable zoom (a search match); 'reveal': pan only if it is not in view (the keyboard). */
  mode: 'zoom' | 'reveal';
}

/**
 * A graph taller than this zoom can fit opens at its top (the way Netron opens a deep model) at
 * DEEP_ZOOM, or the zoom that fits its width if less, instead of as an unreadable sliver.
 */
const MIN_FIT_ZOOM = 0.5;
/** Several rows of layers in view, names still legible; a search zooms in further to read one. */
const DEEP_ZOOM = 0.6;
const [NODE_HALF_WIDTH, NODE_HALF_HEIGHT] = [NODE_WIDTH / 2, NODE_HEIGHT / 2];
const PADDING = 0.08;
/** A press and release further apart than this (px) were a pan, not a click. */
const CLICK_SLOP = 4;

interface Props {
  nodes: FlowNode[];
  edges: EdgePaths;
  /** The view is fitted when this changes (another model, folding, a stage added or removed). */
  fitKey: string;
  /** A new layout: fitted too, unless the user has panned or zoomed since the last fit. */
  version: number;
  stages: Array<Box & { stage: number }>;
  /** The drawing's extent (the layout's bounds). */
  bounds: Box;
  onDropTarget(stage: number | undefined): void;
  focus?: Focus;
}

function Canvas({ nodes, edges, fitKey, version, stages, bounds, onDropTarget, focus }: Props) {
  const flow = useReactFlow();
  const far = useStore((s) => s.transform[2] < FAR_ZOOM);
  const theme = useShell((s) => s.theme);
  const picture = useMemo(() => miniPicture(nodes), [nodes]);
  const target = useRef<number>(undefined);
  const userMoved = useRef(false);
  const pressedAt = useRef<{ x: number; y: number }>(undefined);
  const fitted = useRef('');
  const box = useRef<HTMLDivElement>(null);
  const extent = useRef(bounds);
  extent.current = bounds;
  /** Fit the whole graph, or for a deep one its width, top first. */
  const fit = () => {
    const el = box.current;
    const b = extent.current;
    if (!el || el.clientWidth === 0 || b.width === 0) return;
    const [w, h] = [el.clientWidth, el.clientHeight];
    const zoom = Math.min(1.1, w / (b.width * (1 + 2 * PADDING)), h / (b.height * (1 + 2 * PADDING)));
    if (zoom >= MIN_FIT_ZOOM) return void flow.fitView({ padding: PADDING, maxZoom: 1.1 });
    const z = Math.min(DEEP_ZOOM, w / (b.width * (1 + 2 * PADDING)));
    void flow.setViewport({ x: (w - b.width * z) / 2 - b.x * z, y: 16 - b.y * z, zoom: z });
  };
  useEffect(() => {
    if (fitKey !== fitted.current) userMoved.current = false;
    fitted.current = fitKey;
    if (userMoved.current) return;
    const frame = requestAnimationFrame(fit);
    return () => cancelAnimationFrame(frame);
  }, [flow, fitKey, version]);
  useEffect(() => {
    if (!focus) return;
    // The user asked for this view: a relayout must not fit it away.
    userMoved.current = true;
    if (focus.mode === 'reveal') {
      const el = box.current;
      const p = flow.flowToScreenPosition({ x: focus.x, y: focus.y });
      const r = el?.getBoundingClientRect();
      const zoom = flow.getZoom();
      const [hw, hh] = [(NODE_HALF_WIDTH + 16) * zoom, (NODE_HALF_HEIGHT + 16) * zoom];
      if (r && p.x - hw >= r.left && p.x + hw <= r.right && p.y - hh >= r.top && p.y + hh <= r.bottom) return;
      void flow.setCenter(focus.x, focus.y, { zoom, duration: 200 });
      return;
    }
    void flow.setCenter(focus.x, focus.y, { zoom: Math.max(flow.getZoom(), 0.85), duration: 250 });
    // Only a new search step or key moves the view, not the point shifting under a relayout.
  }, [flow, focus?.seq]);
  // The panel shrinks when the monitor opens: keep the graph fitted while the user has not moved it.
  useEffect(() => {
    const el = box.current;
    if (!el) return;
    let frame = 0;
    const observer = new ResizeObserver(() => {
      cancelAnimationFrame(frame);
      frame = requestAnimationFrame(() => !userMoved.current && fit());
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
    pressedAt.current = { x: e.clientX, y: e.clientY };
    if (e.target instanceof Element && e.target.classList.contains('react-flow__pane')) e.target.setPointerCapture(e.pointerId);
  };
  /**
   * A click on the empty pane clears the selection and closes the inspector. xyflow calls it at the end
   * of a pan too (the press and the release are both on the pane): that is no click, and clearing an
   * empty selection anew rendered the whole studio again, half a second and more with 1,000 layers.
   */
  const onPaneClick = (e: MouseEvent) => {
    const from = pressedAt.current;
    if (from && Math.hypot(e.clientX - from.x, e.clientY - from.y) > CLICK_SLOP) return;
    if (useEditor.getState().selection.length) setSelection([]);
    if (useGraphUi.getState().inspected !== undefined) inspect(undefined);
  };

  return (
    <div ref={box} className={`graph__canvas${far ? ' graph__canvas--far' : ''}`} onPointerDown={onPointerDown} onDragOver={onDragOver} onDrop={onDrop} onDragLeave={(e) => e.currentTarget === e.target && setTarget(undefined)}>
      <FarZoom.Provider value={far}>
        <ReactFlow
          nodes={nodes}
          nodeTypes={nodeTypes}
          colorMode={theme}
          nodesDraggable={false}
          nodesConnectable={false}
          elementsSelectable={false}
          proOptions={{ hideAttribution: true }}
          minZoom={0.05}
          onlyRenderVisibleElements={nodes.length > 300}
          onMoveStart={(event) => {
            if (event) userMoved.current = true;
            unhover();
            box.current?.classList.add('graph__canvas--moving');
          }}
          onMoveEnd={() => box.current?.classList.remove('graph__canvas--moving')}
          onPaneClick={onPaneClick}
          fitView
        >
          {/* No dot grid (as Netron): its pattern lies outside the moving viewport, so each frame of a pan
              re-rasterised the whole pane's dots, in software the largest cost of a pan after the stage frames' dashes. */}
          <EdgeLayer paths={edges} />
          <Controls showInteractive={false} />
          <GraphMiniMap picture={picture} onUserMove={() => (userMoved.current = true)} />
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
