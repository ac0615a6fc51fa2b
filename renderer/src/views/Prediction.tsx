import type { PlanCost } from '../../../engine/cost/planCost';
import { stageColor } from '../graph/stageColors';

const mib = (bytes: number) => `${(bytes / 2 ** 20).toFixed(bytes < 2 ** 24 ? 1 : 0)} MiB`;

/**
 * What the cost model predicts for the plan before anything runs: step time and its breakdown, the
 * pipeline bubble, and each stage's memory against its device (red when it does not fit).
 */
export function Prediction({ cost }: { cost: PlanCost }) {
  const perStage = new Map<number, PlanCost['devices'][number]>();
  for (const d of cost.devices) if (!perStage.has(d.stage) || d.memory.total > perStage.get(d.stage)!.memory.total) perStage.set(d.stage, d);
  return (
    <div className="prediction" data-testid="prediction">
      <div className="prediction__head">
        Predicted <span className="prediction__hint">(datasheet speeds)</span>
      </div>
      <dl className="plan__facts">
        <dt>Step time</dt>
        <dd data-testid="predicted-step">
          {cost.stepMs.toFixed(cost.stepMs < 10 ? 2 : 1)} ms · {Math.round(cost.samplesPerSec).toLocaleString()} samples/s
        </dd>
        <dt>Breakdown</dt>
        <dd>
          compute {cost.breakdown.computeMs.toFixed(1)} · comm {cost.breakdown.exposedCommMs.toFixed(1)} · bubble {cost.breakdown.bubbleMs.toFixed(1)} ms
        </dd>
        <dt>Bubble</dt>
        <dd>{(cost.bubbleFraction * 100).toFixed(1)}% of the pipeline phase</dd>
        <dt>Memory</dt>
        <dd>
          {[...perStage.values()].map((d) => (
            <span
              key={d.stage}
              className={`plan__stage${d.fits ? '' : ' plan__stage--over'}`}
              style={{ borderColor: stageColor(d.stage) }}
              title={`parameters ${mib(d.memory.parameters)}, gradients ${mib(d.memory.gradients)}, optimizer ${mib(d.memory.optimizer)}, activations ${mib(d.memory.activations)}, buffers ${mib(d.memory.buffers)}`}
            >
              {mib(d.memory.total)} / {mib(d.capacityBytes)}
            </span>
          ))}
        </dd>
        <dt>Traffic</dt>
        <dd>{mib(cost.commBytesPerStep)} per step</dd>
      </dl>
    </div>
  );
}
