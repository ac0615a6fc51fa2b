import type { Node, NodeProps } from '@xyflow/react';
import { memo, useContext } from 'react';
import type { LayerNode } from '../../../engine/model/graph';
import type { Diagnostic } from '../../../engine/plan/diagnostics';
import { nodeHandlers } from '../editor/selection';
import { describeSpec, formatCount, formatShape } from '../format';
import { FarZoom } from './farZoom';
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

/**
 * One layer: its name and kind, its configuration, output shape and parameters; select, drag, right-click.
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
    >
      {!far && (
        <>
          <div className="layer-node__title">
            <span className="layer-node__name">{layer.id}</span>
            <span className="layer-node__kind">{layer.spec.kind}</span>
          </div>
          <div className="layer-node__spec">{describeSpec(layer.spec)}</div>
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
