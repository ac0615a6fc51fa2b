import type { Node, NodeProps } from '@xyflow/react';
import { memo, useContext } from 'react';
import type { LayerNode } from '../../../engine/model/graph';
import { nodeHandlers } from '../editor/selection';
import { formatCompact, formatShape } from '../format';
import { FarZoom } from './farZoom';
import { hover, inspect, shortName, unhover } from './graphUi';
import { IssueMark } from './IssueMark';
import type { LayerDecor } from './LayerNodeView';
import { stageColor } from './stageColors';

export type BlockFlowNode = Node<{ group: string; layers: LayerNode[]; onOpen?(group: string): void } & LayerDecor, 'block'>;

/** A folded group of layers: its name, kinds, output and parameters; selected, dragged and moved as one; a double click unfolds it. Zoomed far out, only its box. */
export const BlockNodeView = memo(function BlockNodeView({ id, data }: NodeProps<BlockFlowNode>) {
  const { group, layers, stage, selected, issues, found } = data;
  const far = useContext(FarZoom);
  const kinds = [...new Set(layers.map((l) => l.spec.kind))];
  const params = layers.reduce((sum, l) => sum + l.params, 0);
  const last = layers[layers.length - 1];
  const ids = layers.map((l) => l.id);
  const handlers = nodeHandlers(ids);
  return (
    <div
      className={`layer-node layer-node--block nodrag nopan${selected ? ' layer-node--selected' : ''}${found ? ` layer-node--found-${found}` : ''}`}
      data-testid="graph-block"
      data-group={group}
      data-found={found}
      data-layers={ids.join(' ')}
      data-stage={stage}
      aria-selected={selected}
      style={{ borderLeftColor: stageColor(stage) }}
      {...handlers}
      onClick={(e) => {
        handlers.onClick(e);
        if (!e.shiftKey) inspect(id);
      }}
      onDoubleClick={(e) => {
        e.stopPropagation();
        data.onOpen?.(group);
      }}
      onMouseEnter={(e) => hover(id, e.currentTarget)}
      onMouseLeave={() => unhover(id)}
    >
      {!far && (
        <>
          <div className="layer-node__title">
            <span className="layer-node__name">{shortName(group, 16)}</span>
            <span className="layer-node__kind">{layers.length} layers</span>
          </div>
          <div className="layer-node__spec">
            {kinds.slice(0, 4).join(' · ')}
            {kinds.length > 4 ? ' …' : ''}
          </div>
          <div className="layer-node__facts">
            <span title="Output shape of the block (per sample)">→ {formatShape(last.outputShape)}</span>
            <span title="Trainable parameters">{formatCompact(params)} params</span>
          </div>
          <IssueMark issues={issues} />
        </>
      )}
    </div>
  );
});
