import { addMergeableSums, confusionOf, type MergeableSums, type ValidationResult } from '../../engine/protocol/evaluation.js';
import type { EventLog } from './eventLog.js';
import type { Generation } from './generation.js';

export interface EvaluationOptions {
  /** Class names by class id per output (TrainingSetup.classes), to name the confusion matrix's rows. */
  classes?: Record<string, string[]>;
  /** The job's last step: its evaluation (the final one) carries the confusion matrix. */
  lastStep: number;
}

/** The validation-set evaluations of a job: each a round every agent answers with its share of the sums. */
export class Evaluation {
  private evalId = 0;
  /** The latest result, which the final event reports. */
  last: ValidationResult = { validationLoss: 0, validationAccuracy: 0 };

  constructor(
    private readonly log: EventLog,
    private readonly perEpoch: number,
    private readonly options: EvaluationOptions,
  ) {}

  async run(gen: Generation, at: number): Promise<void> {
    const replies = await gen.ask({ type: 'eval', evalId: this.evalId });
    this.evalId += 1;
    const sum = (field: 'count' | 'total' | 'lossSum' | 'correct') => replies.reduce((acc, m) => acc + m.header[field], 0);
    const count = sum('count');
    // No validation samples (no val/ folder and no --validation-split): nothing to report.
    if (count === 0) return;
    const total = sum('total');
    const merged: MergeableSums = {};
    for (const reply of replies) addMergeableSums(merged, reply.header);
    const metrics = Object.fromEntries(Object.entries(merged.metrics ?? {}).filter(([, m]) => m.count > 0).map(([name, m]) => [name, m.sum / m.count]));
    // The matrix goes with the last evaluation (and so the final event) only: one per run is what a reader wants, and it can be large.
    const confusion = at === this.options.lastStep && merged.confusion ? confusionOf(merged.confusion, this.options.classes?.[merged.confusion.output]) : undefined;
    this.last = {
      validationLoss: sum('lossSum') / count,
      ...(total > 0 ? { validationAccuracy: sum('correct') / total } : {}),
      ...(Object.keys(metrics).length ? { metrics } : {}),
      ...(confusion ? { confusion } : {}),
    };
    this.log.emit({ type: 'eval', step: at, epoch: at / this.perEpoch, ...this.last });
  }
}
