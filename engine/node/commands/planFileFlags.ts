import { optimizerFromOptions } from '../../plan/optimizerOptions.js';
import type { Plan } from '../../plan/plan.js';
import { shuffleFrom } from '../trainingOptions.js';
import { intOption, numberOption, type OptionValues } from './optionValues.js';

/**
 * With --plan-file the plan file is the whole contract: batch, optimizer, seed and layout are its. A
 * flag that says something else (--batch 128 beside a plan of 64) used to be silently ignored; each
 * such flag now comes back as one line naming the flag, its value and the plan's, so the command can
 * refuse. A flag that agrees with the plan is harmless and passes.
 */
export function planFileConflicts(values: OptionValues, plan: Plan, modelRef: string): string[] {
  const conflicts: string[] = [];
  const differ = (flag: string, given: unknown, field: string, planned: unknown) => {
    if (given !== undefined && given !== planned) conflicts.push(`--${flag} ${String(given)}, but the plan's ${field} is ${planned === undefined ? 'not set' : String(planned)}`);
  };
  if (values.plan !== undefined) conflicts.push(`--plan ${String(values.plan)} names a preset plan; --plan-file names another`);
  if (values.model !== undefined && plan.model !== modelRef && plan.model !== String(values.model)) {
    conflicts.push(`--model ${String(values.model)}, but the plan is for model ${plan.model}`);
  }
  const optimizer = plan.optimizer as Record<string, unknown>;
  differ('batch', intOption(values, 'batch'), 'globalBatch', plan.globalBatch);
  differ('micro-batches', intOption(values, 'micro-batches'), 'microBatches', plan.microBatches);
  differ('seed', intOption(values, 'seed', { min: 0 }), 'seed', plan.seed);
  differ('lr', numberOption(values, 'lr', { above: 0 }), 'optimizer.learningRate', plan.optimizer.learningRate);
  differ('schedule', values.schedule, 'schedule', plan.schedule);
  differ('zero', intOption(values, 'zero', { min: 0, max: 3 }), 'zero', plan.zero);
  differ('recompute', values.recompute ? true : undefined, 'recompute', plan.recompute);
  differ('clip-norm', numberOption(values, 'clip-norm', { above: 0 }), 'gradientClipNorm', plan.gradientClipNorm);
  differ('shuffle', shuffleFrom(values), 'shuffle', plan.shuffle ?? true);
  if (values.optimizer !== undefined) differ('optimizer', values.optimizer, 'optimizer.kind', optimizerFromOptions(String(values.optimizer), undefined).kind === plan.optimizer.kind ? values.optimizer : plan.optimizer.kind);
  differ('momentum', numberOption(values, 'momentum', { min: 0, max: 1 }), 'optimizer.momentum', optimizer.momentum);
  differ('weight-decay', numberOption(values, 'weight-decay', { min: 0 }), 'optimizer.weightDecay', optimizer.weightDecay);
  differ('nesterov', values.nesterov ? true : undefined, 'optimizer.nesterov', optimizer.nesterov);
  return conflicts;
}
