import { formatPercent } from '../format';
import { stageColor } from '../graph/stageColors';
import type { PipelineStageLine } from '../store/metrics';

/**
 * An asynchronous pipeline's health next to the loss: per stage, the delay τ its gradients arrive
 * with, how busy it is (no flush means no bubble), PipeMare's step-size multiplier and the relative
 * size of the discrepancy correction.
 */
export function PipelineStats({ stages }: { stages: PipelineStageLine[] }) {
  if (stages.length === 0) return null;
  return (
    <table className="pipeline-stats" data-testid="pipeline-stats">
      <thead>
        <tr>
          <th>Stage</th>
          <th title="optimizer updates between a micro-batch's forward pass and its update">Delay τ</th>
          <th>Utilization</th>
          <th title="PipeMare learning-rate rescheduling: α·τ^−(1−min(k/K,1))">LR ×</th>
          <th title="‖τ·δ‖/‖w‖: how far the backward pass's weights are extrapolated">Correction</th>
        </tr>
      </thead>
      <tbody>
        {stages.map((s) => (
          <tr key={s.stage}>
            <td>
              <span className="plan__stage" style={{ borderColor: stageColor(s.stage) }}>
                {s.stage}
              </span>
            </td>
            <td>{s.delay}</td>
            <td>{formatPercent(s.utilization, 0)}</td>
            <td>{s.lrMultiplier.toFixed(3)}</td>
            <td>{s.correction === 0 ? '—' : s.correction.toExponential(1)}</td>
          </tr>
        ))}
      </tbody>
    </table>
  );
}
