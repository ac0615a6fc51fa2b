import { gpipeOrder, oneFOneBOrder, peakInFlight, type PipelineOp } from '../sim/scheduleOrder.js';
import { PipeMareSchema, type Plan } from './plan.js';

/** What of a plan a stage's order depends on (a Plan is one). */
export interface PipelineShape {
  microBatches: number;
  stages: readonly unknown[];
  pipemare?: Plan['pipemare'];
}

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
  /**
   * The order of one stage's forward and backward passes over `microBatches` (default: the plan's)
   * as the agents run it (engine/sim/scheduleOrder.ts).
   */
  stageOrder: (plan: PipelineShape, stage: number, microBatches?: number) => PipelineOp[];
}

const SCHEDULES: Record<Plan['schedule'], ScheduleTraits> = {
  gpipe: { stepBarrier: true, stageOrder: (plan, _stage, m = plan.microBatches) => gpipeOrder(m) },
  '1f1b': { stepBarrier: true, stageOrder: (plan, stage, m = plan.microBatches) => oneFOneBOrder(m, stage, plan.stages.length) },
  // PipeMare streams 1F1B's steady state, with a few more forwards in flight to absorb message latency.
  async: { stepBarrier: false, stageOrder: (plan, stage, m = plan.microBatches) => oneFOneBOrder(m, stage, plan.stages.length, PipeMareSchema.parse(plan.pipemare ?? {}).inFlightSlack) },
};

export function scheduleTraits(schedule: Plan['schedule']): ScheduleTraits {
  return SCHEDULES[schedule];
}

/**
 * Micro-batches whose activations (and stashed inputs) a stage holds at once, from the order it runs:
 * GPipe keeps all m until the flush, 1F1B at most p−s, the asynchronous pipeline p−s plus its slack.
 * The cost model prices activation memory with it.
 */
export function activationsInFlight(plan: PipelineShape & Pick<Plan, 'schedule'>, stage: number): number {
  return peakInFlight(scheduleTraits(plan.schedule).stageOrder(plan, stage));
}

/** Whether a plan's optimizer state is sharded over each data-parallel group (ZeRO 1/2 at a step barrier). */
export function shardsOptimizerState(plan: Pick<Plan, 'schedule' | 'zero'>): boolean {
  return plan.zero > 0 && scheduleTraits(plan.schedule).stepBarrier;
}
