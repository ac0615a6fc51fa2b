import type { OptimizerConfig, Plan } from '../plan/plan.js';
import type { CostOptions } from '../cost/planCost.js';

/** What the planner may change, and how it reports. Everything is optional. */
export interface SuggestOptions {
  /** How many suggestions to return (default 3). */
  top?: number;
  /** Samples per optimizer step; the planner never changes it (default: 32 per device). */
  globalBatch?: number;
  /** Price every candidate of the search space with the full cost model, no pruning (slow). */
  exhaustive?: boolean;
  optimizer?: OptimizerConfig;
  /** Largest micro-batch count to try, a power of 2 (default 32). */
  maxMicroBatches?: number;
  /** Passed to the cost model (precision, bucket size, measured profile). */
  cost?: CostOptions;
  seed?: number;
  /** Only plans this accepts are suggested (e.g. what today's agents can execute). */
  accept?: (plan: Plan) => boolean;
  /** Called as the search advances: `done` of `total` candidates priced. */
  onProgress?: (done: number, total: number) => void;
}

/** The prediction shown beside a suggestion; peakMemoryBytes has one entry per cluster device. */
export interface Prediction {
  stepTimeMs: number;
  bubbleFraction: number;
  peakMemoryBytes: number[];
  commBytesPerStep: number;
}

export interface Suggestion {
  plan: Plan;
  /** One line naming the cost that decided this plan. */
  rationale: string;
  predicted: Prediction;
}

export interface PlannerResult {
  searchMs: number;
  suggestions: Suggestion[];
  /** Candidates priced (estimated or fully costed). */
  evaluated: number;
}
