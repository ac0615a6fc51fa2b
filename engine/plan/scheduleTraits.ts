import { gpipeOrder, oneFOneBOrder, type PipelineOp } from '../sim/scheduleOrder.js';
import type { Plan } from './plan.js';

/**
 * What a pipeline schedule means to the code that runs, prices and manages a plan. Callers ask these
 * questions instead of comparing the schedule's name, so a new schedule is one entry in the table.
 */
export interface ScheduleTraits {
  /**
   * Every step ends at a barrier where one update applies the gradients of all its micro-batches,
   * summed over the data-parallel group: the mathematics of one process. Only then can a step be
   * undone after a loss, the optimizer state be sharded (ZeRO) and the global gradient norm clipped,
   * and membership or virtual nodes change between steps. Without one (PipeMare), each stage updates
   * as its micro-batches stream through, and no single state describes the updates in flight.
   */
  stepBarrier: boolean;
  /** The order of one stage's forward and backward passes over a step's micro-batches (engine/sim/scheduleOrder.ts). */
  stageOrder: (microBatches: number, stage: number, stages: number) => PipelineOp[];
  /**
   * Micro-batches whose activations a stage holds at once: GPipe keeps all m until the flush; 1F1B
   * and the asynchronous pipeline keep at most p−s (the warm-up depth). The cost model prices memory with it.
   */
  activationsInFlight: (microBatches: number, stage: number, stages: number) => number;
}

const warmUpDepth = (microBatches: number, stage: number, stages: number) => Math.min(stages - stage, microBatches);

const SCHEDULES: Record<Plan['schedule'], ScheduleTraits> = {
  gpipe: { stepBarrier: true, stageOrder: (m) => gpipeOrder(m), activationsInFlight: (m) => m },
  '1f1b': { stepBarrier: true, stageOrder: oneFOneBOrder, activationsInFlight: warmUpDepth },
  async: { stepBarrier: false, stageOrder: oneFOneBOrder, activationsInFlight: warmUpDepth },
};

export function scheduleTraits(schedule: Plan['schedule']): ScheduleTraits {
  return SCHEDULES[schedule];
}

/** Whether a plan's optimizer state is sharded over each data-parallel group (ZeRO 1/2 at a step barrier). */
export function shardsOptimizerState(plan: Pick<Plan, 'schedule' | 'zero'>): boolean {
  return plan.zero > 0 && scheduleTraits(plan.schedule).stepBarrier;
}
