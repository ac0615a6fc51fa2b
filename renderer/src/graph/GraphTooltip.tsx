import type { RefObject } from 'react';
import { formatCount, formatShape } from '../format';
import type { ViewNode } from './collapse';
import { useGraphUi } from './graphUi';
import { layerClass } from './LayerNodeView';

/**
 * The tooltip of the node under the pointer: its full name (a node shows the start and end of a long
 * one), its class, output shape and parameters; for a folded block its layers. Drawn in the graph's
 * container below the node (above it near the bottom edge).
 */
export function GraphTooltip({ nodes, container }: { nodes: readonly ViewNode[]; container: RefObject<HTMLElement | null> }) {
  const hovered = useGraphUi((s) => s.hovered);
  const box = container.current?.getBoundingClientRect();
  const node = hovered && nodes.find((n) => n.id === hovered.id);
  if (!hovered || !node || !box) return null;
  const below = hovered.rect.bottom + 90 < box.bottom;
  const style = {
    left: Math.max(4, Math.min(hovered.rect.left - box.left, box.width - 300)),
    ...(below ? { top: hovered.rect.bottom - box.top + 6 } : { bottom: box.bottom - hovered.rect.top + 6 }),
  };
  return (
    <div className="graph__tooltip" role="tooltip" data-testid="graph-tooltip" style={style}>
      {node.kind === 'layer' ? (
        <>
          <div className="graph__tooltip-name" data-testid="graph-tooltip-name">
            {node.layer.id}
          </div>
          <div className="graph__tooltip-meta">
            {layerClass(node.layer)} · → {formatShape(node.layer.outputShape)} · {formatCount(node.layer.params)} params
          </div>
        </>
      ) : (
        <>
          <div className="graph__tooltip-name" data-testid="graph-tooltip-name">
            {node.group}
          </div>
          <div className="graph__tooltip-meta">
            {node.layers.length} layers: {node.layers.slice(0, 6).map((l) => l.id).join(', ')}
            {node.layers.length > 6 ? ', …' : ''}
          </div>
          <div className="graph__tooltip-meta">Double-click to unfold</div>
        </>
      )}
    </div>
  );
}
