import { Handle, Position } from '@xyflow/react';
import type { Node, NodeProps } from '@xyflow/react';
import type { LayerNode } from '../../../engine/model/graph';
import { nodeHandlers } from '../editor/selection';
import { formatCompact, formatShape } from '../format';
import { IssueMark } from './IssueMark';
import type { LayerDecor } from './LayerNodeView';
import { stageColor } from './stageColors';

export type BlockFlowNode = Node<{ group: string; layers: LayerNode[] } & LayerDecor, 'block'>;

/** A folded group of layers: its name, kinds, output and parameters; selected, dragged and moved as one. */
export function BlockNodeView({ data }: NodeProps<BlockFlowNode>) {
  const { group, layers, stage, selected, issues, found } = data;
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
      <Handle type="target" id="up" position={Position.Top} isConnectable={false} />
      <Handle type="target" id="from-stage" position={Position.Left} isConnectable={false} />
      <div className="layer-node__title">
        <span className="layer-node__name">{group}</span>
        <span className="layer-node__kind">{layers.length} layers</span>
      </div>
      <div className="layer-node__spec">{kinds.slice(0, 4).join(' · ')}{kinds.length > 4 ? ' …' : ''}</div>
      <div className="layer-node__facts">
        <span title="Output shape of the block (per sample)">→ {formatShape(last.outputShape)}</span>
        <span title="Trainable parameters">{formatCompact(params)} params</span>
      </div>
      <IssueMark issues={issues} />
      <Handle type="source" id="down" position={Position.Bottom} isConnectable={false} />
      <Handle type="source" id="to-stage" position={Position.Right} isConnectable={false} />
    </div>
  );
}
