import type { Node, NodeProps } from '@xyflow/react';
import { memo, useContext } from 'react';
import type { LayerNode } from '../../../engine/model/graph';
import type { Diagnostic } from '../../../engine/plan/diagnostics';
import { nodeHandlers } from '../editor/selection';
import { describeSpec, formatCount, formatShape } from '../format';
import { FarZoom } from './farZoom';
import { hover, inspect, shortName, unhover } from './graphUi';
import { IssueMark } from './IssueMark';
import { stageColor } from './stageColors';

export type LayerDecor = {
  stage?: number;
  selected: boolean;
  issues: Diagnostic[];
  /** The weight layout when the layer is sharded (not replicated). */
  sharding?: string;
  /** A search match; 'current' is the focused one. */
  found?: 'current' | 'match';
};

export type LayerFlowNode = Node<{ layer: LayerNode } & LayerDecor, 'layer'>;

/** What a layer is, as a class name: Shoal's kind, or the Keras class of a layer Shoal does not model. */
export const layerClass = (layer: LayerNode) => (layer.spec.kind === 'opaque' ? layer.spec.className : layer.spec.kind);

/**
 * One layer: its name (start and end of a long one; in full in the tooltip) and class, its configuration, output shape and parameters; select, drag, right-click.
 * Zoomed far out, only its box (FarZoom). Memoized: xyflow renders a node again when it measures it.
 */
export const LayerNodeView = memo(function LayerNodeView({ data }: NodeProps<LayerFlowNode>) {
  const { layer, stage, selected, issues, sharding, found } = data;
  const far = useContext(FarZoom);
  const handlers = nodeHandlers([layer.id]);
  return (
    <div
      className={`layer-node nodrag nopan${selected ? ' layer-node--selected' : ''}${found ? ` layer-node--found-${found}` : ''}`}
      data-testid="graph-node"
      data-layer={layer.id}
      data-found={found}
      data-stage={stage}
      aria-selected={selected}
      style={{ borderLeftColor: stageColor(stage) }}
      {...handlers}
      onClick={(e) => {
        handlers.onClick(e);
        // A plain click opens the layer in the inspector; shift-click only extends the selection.
        if (!e.shiftKey) inspect(layer.id);
      }}
      onMouseEnter={(e) => hover(layer.id, e.currentTarget)}
      onMouseLeave={() => unhover(layer.id)}
    >
      {!far && (
        <>
          <div className="layer-node__title">
            <span className="layer-node__name">{shortName(layer.id)}</span>
          </div>
          <div className="layer-node__spec">
            <span className="layer-node__kind" data-testid="layer-class">
              {layerClass(layer)}
            </span>{' '}
            {describeSpec(layer.spec)}
          </div>
          <div className="layer-node__facts">
            <span title="Output shape (per sample)">→ {formatShape(layer.outputShape)}</span>
            {sharding && (
              <span className="layer-node__shard" data-testid="layer-sharding" title="Weight layout over the stage's tensor-parallel group">
                {sharding}
              </span>
            )}
            <span title="Trainable parameters">{formatCount(layer.params)} params</span>
          </div>
          <IssueMark issues={issues} />
        </>
      )}
    </div>
  );
});
