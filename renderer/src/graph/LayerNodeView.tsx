import { Handle, Position } from '@xyflow/react';
import type { Node, NodeProps } from '@xyflow/react';
import type { LayerNode } from '../../../engine/model/graph';
import { describeSpec, formatCount, formatShape } from '../format';
import { stageColor } from './stageColors';

export type LayerFlowNode = Node<{ layer: LayerNode; stage?: number }, 'layer'>;

/** One layer: its name and kind, what it is configured as, its output shape and parameter count. */
export function LayerNodeView({ data }: NodeProps<LayerFlowNode>) {
  const { layer, stage } = data;
  return (
    <div className="layer-node" data-testid="graph-node" data-layer={layer.id} style={{ borderLeftColor: stageColor(stage) }}>
      <Handle type="target" id="up" position={Position.Top} isConnectable={false} />
      <Handle type="target" id="from-stage" position={Position.Left} isConnectable={false} />
      <div className="layer-node__title">
        <span className="layer-node__name">{layer.id}</span>
        <span className="layer-node__kind">{layer.spec.kind}</span>
      </div>
      <div className="layer-node__spec">{describeSpec(layer.spec)}</div>
      <div className="layer-node__facts">
        <span title="Output shape (per sample)">→ {formatShape(layer.outputShape)}</span>
        <span title="Trainable parameters">{formatCount(layer.params)} params</span>
      </div>
      <Handle type="source" id="down" position={Position.Bottom} isConnectable={false} />
      <Handle type="source" id="to-stage" position={Position.Right} isConnectable={false} />
    </div>
  );
}
