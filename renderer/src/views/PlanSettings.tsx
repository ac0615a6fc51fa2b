import type { Plan } from '../../../engine/plan/plan';
import { applyEdit } from '../editor/editorStore';
import { setPlanFields, setVirtualNodes } from '../editor/planEdits';
import type { PlanState } from '../store/planState';
import { FieldIssues } from './FieldIssues';
import { NumberField } from './NumberField';

const SCHEDULES: Array<{ value: Plan['schedule']; label: string }> = [
  { value: 'gpipe', label: 'GPipe' },
  { value: '1f1b', label: '1F1B' },
  { value: 'async', label: 'Async (PipeMare)' },
];

/** The plan-level settings: batch, micro-batches, virtual nodes, schedule, ZeRO and recomputation. */
export function PlanSettings({ state }: { state: PlanState }) {
  const { plan, byField } = state;
  if (!plan) return null;
  const edit = (fields: Parameters<typeof setPlanFields>[1]) => applyEdit(setPlanFields(plan, fields));
  const vnIssues = [...(byField.get('virtualNodes.total') ?? []), ...(byField.get('virtualNodes.perReplica') ?? [])];
  return (
    <div className="plan-settings">
      <div className="field-row">
        <div>
          <NumberField label="Global batch" testId="global-batch-input" value={plan.globalBatch} min={1} max={1 << 20} onChange={(v) => edit({ globalBatch: v })} />
          <FieldIssues issues={byField.get('globalBatch')} />
        </div>
        <div>
          <NumberField label="Micro-batches" testId="micro-batches-input" value={plan.microBatches} min={1} max={4096} onChange={(v) => edit({ microBatches: v })} />
          <FieldIssues issues={byField.get('microBatches')} />
        </div>
      </div>
      <div className="field-row">
        <div className="field">
          <label className="field__label" htmlFor="schedule-picker">
            Schedule
          </label>
          <select id="schedule-picker" data-testid="schedule-picker" value={plan.schedule} onChange={(e) => edit({ schedule: e.target.value as Plan['schedule'] })}>
            {SCHEDULES.map((s) => (
              <option key={s.value} value={s.value}>
                {s.label}
              </option>
            ))}
          </select>
          <FieldIssues issues={byField.get('schedule')} />
        </div>
        <div className="field">
          <label className="field__label" htmlFor="zero-picker">
            ZeRO
          </label>
          <select id="zero-picker" data-testid="zero-picker" value={plan.zero} onChange={(e) => edit({ zero: Number(e.target.value) })}>
            <option value={0}>0 — off</option>
            <option value={1}>1 — optimizer state</option>
            <option value={2}>2 — + gradients</option>
            <option value={3}>3 — + parameters</option>
          </select>
          <FieldIssues issues={byField.get('zero')} />
        </div>
      </div>
      <div className="field-row">
        <div>
          <NumberField
            label="Virtual nodes"
            testId="virtual-nodes-input"
            value={plan.virtualNodes?.total ?? plan.stages[0].dataParallel}
            min={1}
            max={4096}
            onChange={(v) => applyEdit(setVirtualNodes(plan, v))}
          />
          {plan.virtualNodes && (
            <button type="button" className="link-button" onClick={() => applyEdit(setVirtualNodes(plan, undefined))}>
              one per replica
            </button>
          )}
          <FieldIssues issues={vnIssues} />
        </div>
        <label className="field field--check">
          <input type="checkbox" data-testid="recompute-toggle" checked={plan.recompute} onChange={(e) => edit({ recompute: e.target.checked })} />
          <span>Recompute activations</span>
        </label>
      </div>
    </div>
  );
}
