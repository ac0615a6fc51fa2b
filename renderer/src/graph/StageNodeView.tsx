import type { Node, NodeProps } from '@xyflow/react';
import type { Diagnostic } from '../../../engine/plan/diagnostics';
import { formatBytes, formatCompact, formatMs } from '../format';
import { stageColor } from './stageColors';

/** What the cost model predicts for one stage, for its box on the graph. */
export interface StagePrediction {
  /** Compute plus exposed communication of the stage in one step. */
  ms: number;
  /** The stage's most loaded device against that device's capacity. */
  memoryBytes: number;
  capacityBytes: number;
  fits: boolean;
  /** Bytes the stage's devices send and receive per step. */
  trafficBytes: number;
}

export type StageData = {
  stage: number;
  dataParallel: number;
  tensorParallel: number;
  layers: number;
  params: number;
  prediction?: StagePrediction;
  issues: Diagnostic[];
  dropTarget: boolean;
};

export type StageFlowNode = Node<StageData, 'stage'>;

/** A pipeline stage's box: badge, degrees and size; its predicted time, memory and traffic; its issues. */
export function StageNodeView({ data }: NodeProps<StageFlowNode>) {
  const color = stageColor(data.stage);
  const p = data.prediction;
  const degrees = `${data.dataParallel} replica${data.dataParallel > 1 ? 's' : ''}${data.tensorParallel > 1 ? ` × ${data.tensorParallel} shards` : ''}`;
  const first = data.issues[0];
  return (
    <div className={`stage-node${data.dropTarget ? ' stage-node--drop' : ''}`} data-testid="stage-box" data-stage={data.stage} style={{ borderColor: color }}>
      <div className="stage-node__label">
        <span className="stage-badge" data-testid="stage-badge" style={{ backgroundColor: color }}>
          Stage {data.stage}
        </span>
        <span className="stage-node__meta">
          {degrees} · {data.layers} layers · {formatCompact(data.params)} params
        </span>
      </div>
      {p && (
        <div className="stage-node__prediction" data-testid="stage-prediction">
          <span data-testid="stage-time">{formatMs(p.ms)}</span>
          <span className={p.fits ? '' : 'stage-node__over'} data-testid="stage-memory" data-fits={p.fits}>
            {formatBytes(p.memoryBytes)} / {formatBytes(p.capacityBytes)}
          </span>
          <span>↔ {formatBytes(p.trafficBytes)}</span>
        </div>
      )}
      {first && (
        <div className={`stage-node__issue stage-node__issue--${first.severity}`} data-testid="stage-issue">
          {first.severity === 'error' ? '!' : '⚠'} {first.message}
          {data.issues.length > 1 ? ` (+${data.issues.length - 1})` : ''}
        </div>
      )}
    </div>
  );
}
