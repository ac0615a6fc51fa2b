import type { Node, NodeProps } from '@xyflow/react';
import { formatCompact } from '../format';
import { stageColor } from './stageColors';

export type StageFlowNode = Node<{ stage: number; dataParallel: number; layers: number; params: number }, 'stage'>;

/** A pipeline stage's box: a badge with its index, replica count and size; its layers sit inside. */
export function StageNodeView({ data }: NodeProps<StageFlowNode>) {
  const color = stageColor(data.stage);
  return (
    <div className="stage-node" style={{ borderColor: color }} title={`Stage ${data.stage}: ${data.layers} layers, ${data.dataParallel} data-parallel replicas`}>
      <div className="stage-node__label">
        <span className="stage-badge" data-testid="stage-badge" style={{ backgroundColor: color }}>
          Stage {data.stage}
        </span>
        <span className="stage-node__meta">
          {data.dataParallel > 1 ? `${data.dataParallel} replicas` : '1 replica'} · {formatCompact(data.params)} params
        </span>
      </div>
    </div>
  );
}
