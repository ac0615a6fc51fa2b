import type { PlanCost } from '../../../engine/cost/planCost';
import { formatBytes, formatDuration, formatMs, formatPercent, formatRate } from '../format';

/**
 * What the cost model predicts for the plan before anything runs: step time and its breakdown, the
 * pipeline bubble, the peak memory against capacity (red when a device does not fit) and traffic.
 * Per-stage numbers are in the stage table and on the stage boxes.
 */
export function Prediction({ cost, pricedOnAgents }: { cost: PlanCost; pricedOnAgents?: number }) {
  const over = cost.devices.filter((d) => !d.fits);
  const worst = cost.devices.reduce((a, b) => (b.memory.total / b.capacityBytes > a.memory.total / a.capacityBytes ? b : a));
  const m = worst.memory;
  return (
    <div className="prediction" data-testid="prediction">
      <div className="prediction__head">
        Predicted <span className="prediction__hint">(datasheet speeds{pricedOnAgents ? `, on ${pricedOnAgents} agents` : ''})</span>
      </div>
      <dl className="plan__facts">
        <dt>Step time</dt>
        <dd data-testid="predicted-step">
          {formatMs(cost.stepMs)} · {formatRate(cost.samplesPerSec)}
        </dd>
        <dt>Breakdown</dt>
        <dd>
          compute {formatDuration(cost.breakdown.computeMs)} · comm {formatDuration(cost.breakdown.exposedCommMs)} · bubble {formatDuration(cost.breakdown.bubbleMs)} · fixed overhead {formatDuration(cost.breakdown.fixedOverheadMs)} (slowest stage)
        </dd>
        <dt>Bubble</dt>
        <dd data-testid="predicted-bubble">{formatPercent(cost.bubbleFraction)} of the pipeline phase</dd>
        <dt>Memory</dt>
        <dd
          data-testid="predicted-memory"
          data-fits={cost.fits}
          className={cost.fits ? '' : 'plan__stage--over'}
          title={`Most loaded device ${worst.device} (stage ${worst.stage}): parameters ${formatBytes(m.parameters)}, gradients ${formatBytes(m.gradients)}, optimizer ${formatBytes(m.optimizer)}, activations ${formatBytes(m.activations)}, buffers ${formatBytes(m.buffers)}`}
        >
          {formatBytes(m.total)} / {formatBytes(worst.capacityBytes)} peak
          {!cost.fits && ` — ${over.length} device${over.length > 1 ? 's' : ''} out of memory`}
        </dd>
        <dt>Traffic</dt>
        <dd data-testid="predicted-traffic">{formatBytes(cost.commBytesPerStep)} per step</dd>
      </dl>
    </div>
  );
}
