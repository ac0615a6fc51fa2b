import { Panel, useReactFlow, useStore } from '@xyflow/react';
import { memo, useRef } from 'react';
import type { PointerEvent, WheelEvent } from 'react';
import { miniMapGeometry } from './miniMapGeometry';
import type { Rect } from './miniMapGeometry';
import { stageColor } from './stageColors';
import type { FlowNode } from './toFlow';

/** The minimap's picture: every layer or block in its stage's colour, and the bounds of all nodes. */
export interface MiniPicture {
  /** Colour → one SVG path of all the boxes of that colour. */
  paths: Map<string, string>;
  bounds: Rect;
}

/** Margin around the picture, in minimap pixels (as xyflow's MiniMap). */
const OFFSET = 5;

/** The picture of the flow's nodes: stage boxes count for the bounds only, as in xyflow's MiniMap. */
export function miniPicture(nodes: FlowNode[]): MiniPicture {
  const parents = new Map(nodes.filter((n) => n.type === 'stage').map((n) => [n.id, n.position]));
  const parts = new Map<string, string[]>();
  let [x0, y0, x1, y1] = [Infinity, Infinity, -Infinity, -Infinity];
  for (const node of nodes) {
    const parent = node.parentId ? parents.get(node.parentId) : undefined;
    const x = node.position.x + (parent?.x ?? 0);
    const y = node.position.y + (parent?.y ?? 0);
    const width = Number(node.width ?? node.style?.width ?? 0);
    const height = Number(node.height ?? node.style?.height ?? 0);
    [x0, y0, x1, y1] = [Math.min(x0, x), Math.min(y0, y), Math.max(x1, x + width), Math.max(y1, y + height)];
    if (node.type === 'stage') continue;
    const color = stageColor(node.data.stage);
    const list = parts.get(color) ?? parts.set(color, []).get(color)!;
    list.push(`M${x},${y}h${width}v${height}h${-width}z`);
  }
  const paths = new Map([...parts].map(([color, list]) => [color, list.join('')]));
  return { paths, bounds: nodes.length ? { x: x0, y: y0, width: x1 - x0, height: y1 - y0 } : { x: 0, y: 0, width: 0, height: 0 } };
}

/** The boxes: one path per colour, drawn again only when the picture changes, never on a pan or zoom. */
const MiniNodes = memo(function MiniNodes({ paths }: { paths: Map<string, string> }) {
  return [...paths].map(([color, d]) => <path key={color} fill={color} d={d} />);
});

/**
 * An overview of the graph with the visible part outlined: drag in it to pan, wheel to zoom. It replaces
 * xyflow's MiniMap, which draws an SVG element per node, each with its own store subscription, and
 * re-measures every node's bounds: on every frame of a pan of a 1,000-layer graph it re-evaluated and
 * re-rasterised a thousand elements. This one has a handful of paths; only the outline moves. Its size
 * follows the canvas and the graph's shape, and a deep graph is shown a stretch at a time
 * (miniMapGeometry), so it neither covers much of a small window nor draws a tall graph as a hairline.
 */
export function GraphMiniMap({ picture, onUserMove }: { picture: MiniPicture; onUserMove(): void }) {
  const flow = useReactFlow();
  const [tx, ty, zoom] = useStore((s) => s.transform);
  const paneWidth = useStore((s) => s.width);
  const paneHeight = useStore((s) => s.height);
  const dragFrom = useRef<{ x: number; y: number }>(undefined);

  const view = { x: -tx / zoom, y: -ty / zoom, width: paneWidth / zoom, height: paneHeight / zoom };
  const { width, height, box, scale, margin } = miniMapGeometry(picture.bounds, view, { width: paneWidth, height: paneHeight }, OFFSET);
  const outer = { x: box.x - margin, y: box.y - margin, width: box.width + 2 * margin, height: box.height + 2 * margin };

  const onPointerDown = (e: PointerEvent) => {
    e.currentTarget.setPointerCapture(e.pointerId);
    dragFrom.current = { x: e.clientX, y: e.clientY };
  };
  const onPointerMove = (e: PointerEvent) => {
    if (!dragFrom.current) return;
    // The outline follows the pointer: a minimap pixel is `scale` flow units.
    const [dx, dy] = [e.clientX - dragFrom.current.x, e.clientY - dragFrom.current.y];
    dragFrom.current = { x: e.clientX, y: e.clientY };
    const now = flow.getViewport();
    onUserMove();
    void flow.setViewport({ x: now.x - dx * scale * now.zoom, y: now.y - dy * scale * now.zoom, zoom: now.zoom });
  };
  const onPointerUp = () => {
    dragFrom.current = undefined;
  };
  // The same step per wheel notch as a wheel on the canvas.
  const onWheel = (e: WheelEvent) => {
    onUserMove();
    void flow.zoomTo(flow.getZoom() * Math.pow(2, -e.deltaY * (e.deltaMode === 1 ? 0.05 : e.deltaMode ? 1 : 0.002)));
  };

  return (
    <Panel position="bottom-right" className="react-flow__minimap graph-minimap">
      <svg width={width} height={height} viewBox={`${box.x} ${box.y} ${box.width} ${box.height}`} className="react-flow__minimap-svg" role="img" aria-label="Minimap" onPointerDown={onPointerDown} onPointerMove={onPointerMove} onPointerUp={onPointerUp} onPointerCancel={onPointerUp} onWheel={onWheel}>
        <MiniNodes paths={picture.paths} />
        <path
          className="react-flow__minimap-mask"
          d={`M${outer.x},${outer.y}h${outer.width}v${outer.height}h${-outer.width}z M${view.x},${view.y}h${view.width}v${view.height}h${-view.width}z`}
          fillRule="evenodd"
          vectorEffect="non-scaling-stroke"
          pointerEvents="none"
        />
      </svg>
    </Panel>
  );
}
