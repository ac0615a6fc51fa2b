import { Handle, Position } from '@xyflow/react';
import type { Node, NodeProps } from '@xyflow/react';
import type { LayerNode } from '../../../engine/model/graph';
import { formatCompact, formatShape } from '../format';
import { stageColor } from './stageColors';

export type BlockFlowNode = Node<{ group: string; layers: LayerNode[]; stage?: number }, 'block'>;

/** A folded group of layers: its name, how many layers of which kinds, its output and its parameters. */
export function BlockNodeView({ data }: NodeProps<BlockFlowNode>) {
  const { group, layers, stage } = data;
  const kinds = [...new Set(layers.map((l) => l.spec.kind))];
  const params = layers.reduce((sum, l) => sum + l.params, 0);
  const last = layers[layers.length - 1];
  return (
    <div className="layer-node layer-node--block" data-testid="graph-block" data-group={group} style={{ borderLeftColor: stageColor(stage) }} title={layers.map((l) => l.id).join('\n')}>
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
      <Handle type="source" id="down" position={Position.Bottom} isConnectable={false} />
      <Handle type="source" id="to-stage" position={Position.Right} isConnectable={false} />
    </div>
  );
}
