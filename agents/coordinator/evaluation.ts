import type { EventLog } from './eventLog.js';
import type { Generation } from './generation.js';

/** The test-set evaluations of a job: each a round every agent answers with its share of the sums. */
export class Evaluation {
  private evalId = 0;
  /** The latest result, which the final event reports. */
  last: { testAccuracy?: number; testLoss: number } = { testAccuracy: 0, testLoss: 0 };

  constructor(
    private readonly log: EventLog,
    private readonly perEpoch: number,
  ) {}

  async run(gen: Generation, at: number): Promise<void> {
    const replies = await gen.ask({ type: 'eval', evalId: this.evalId });
    this.evalId += 1;
    const sum = (field: 'count' | 'total' | 'lossSum' | 'correct') => replies.reduce((acc, m) => acc + m.header[field], 0);
    const count = sum('count');
    // No validation samples (no val/ folder and no --validation-split): nothing to report.
    if (count === 0) return;
    const total = sum('total');
    this.last = { testLoss: sum('lossSum') / count, ...(total > 0 ? { testAccuracy: sum('correct') / total } : {}) };
    this.log.emit({ type: 'eval', step: at, epoch: at / this.perEpoch, ...this.last });
  }
}
