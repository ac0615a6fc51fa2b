import type { Node, NodeProps } from '@xyflow/react';
import { memo, useContext } from 'react';
import type { LayerNode } from '../../../engine/model/graph';
import { nodeHandlers } from '../editor/selection';
import { formatCompact, formatShape } from '../format';
import { FarZoom } from './farZoom';
import { IssueMark } from './IssueMark';
import type { LayerDecor } from './LayerNodeView';
import { stageColor } from './stageColors';

export type BlockFlowNode = Node<{ group: string; layers: LayerNode[] } & LayerDecor, 'block'>;

/** A folded group of layers: its name, kinds, output and parameters; selected, dragged and moved as one. Zoomed far out, only its box. */
export const BlockNodeView = memo(function BlockNodeView({ data }: NodeProps<BlockFlowNode>) {
  const { group, layers, stage, selected, issues, found } = data;
  const far = useContext(FarZoom);
  const kinds = [...new Set(layers.map((l) => l.spec.kind))];
  const params = layers.reduce((sum, l) => sum + l.params, 0);
  const last = layers[layers.length - 1];
  const ids = layers.map((l) => l.id);
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
      title={ids.join('\n')}
      {...nodeHandlers(ids)}
    >
      {!far && (
        <>
          <div className="layer-node__title">
            <span className="layer-node__name">{group}</span>
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
