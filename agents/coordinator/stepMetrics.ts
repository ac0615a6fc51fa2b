import { earliestAligned } from '../../engine/protocol/clockAlign.js';
import type { TimelineEvent } from '../../engine/protocol/timeline.js';
import type { Message } from '../../engine/wire/frame.js';
import { clockMs } from '../runtime/timelineRecorder.js';
import type { VirtualNodeBalancer } from './balancer.js';
import type { EventLog } from './eventLog.js';
import type { Generation } from './generation.js';
import { stepTimeline, type ClockEstimate } from './measurements.js';
import { now } from './trainingRun.js';

/**
 * What a finished step reports: its loss, time and throughput, the measured timeline when the agents
 * recorded one, and one pipeline line per stage; the balancer learns the replicas' speeds from it.
 */
export class StepMetrics {
  /** When the job's first step started (for the final throughput); before a coordinator restart, when it may be. */
  readonly started: number;
  private stepStart = now();
  private stepOrigin = clockMs();

  constructor(
    private readonly log: EventLog,
    private readonly perEpoch: number,
    private readonly asynchronous: boolean,
    private readonly balancer: VirtualNodeBalancer,
    startedAt: number = now(),
  ) {
    this.started = startedAt;
  }

  /** A synchronous step starts now (not before: the evaluation or checkpoint in between is not part of it). */
  begin(): void {
    this.stepStart = now();
    this.stepOrigin = clockMs();
  }

  record(gen: Generation, clocks: ClockEstimate[], at: number, replies: Message[]): void {
    const { layout, plan } = gen;
    // JSON has no NaN or Infinity: an agent's non-finite loss crosses the wire as null, which Number()
    // reads as 0 — so a diverged run used to show loss 0 every step and finish "successfully".
    const loss = replies.reduce((acc, m) => acc + (m.header.loss === null ? NaN : Number(m.header.loss)), 0);
    const stepMs = now() - this.stepStart;
    this.stepStart = now();
    if (!Number.isFinite(loss)) {
      throw new Error(`The loss became non-finite (${loss}) at step ${at}: training diverged. Lower the learning rate (it is ${plan.optimizer.learningRate}; try 10 to 100 times lower), clip gradients (--clip-norm 1), or check the input data for NaN or huge values.`);
    }
    // The slowest agent's wait for gradient communication after its last layer (what overlap did not hide).
    const commWaitMs = Math.max(0, ...replies.map((m) => Number(m.header.allReduceMs) || 0));
    this.log.emit({ type: 'step', step: at, epoch: (at + 1) / this.perEpoch, loss, stepMs, commWaitMs, samplesPerSec: plan.globalBatch / (stepMs / 1000), elapsedMs: now() - this.started });
    if (!this.asynchronous) this.balancer.observe(plan, layout, replies);
    // An asynchronous step has no start the coordinator set: its window starts at its first pass.
    const origin = this.asynchronous
      ? earliestAligned(replies.map((m) => ({ events: (m.header.timeline as TimelineEvent[] | undefined) ?? [], offsetMs: clocks[Number(m.header.rank)]?.offsetMs ?? 0 })))
      : this.stepOrigin;
    const measured = origin === null ? null : stepTimeline(at, origin, replies, layout, clocks);
    if (measured) this.log.emit(measured);
    if (!this.asynchronous && plan.stages.length === 1) return;
    // One line per stage, from its first replica: every replica of a stage runs the same schedule.
    // A synchronous step is a barrier, so a stage's utilization is its compute over the whole step,
    // bubbles included; an asynchronous stage reports its own (it has no step barrier).
    const sync = (m: Message) => ({ delay: 0, utilization: Number(m.header.computeMs) / Math.max(stepMs, 1e-9), lrMultiplier: 1, correction: 0 });
    replies
      .filter((m) => layout[Number(m.header.rank)].replica === 0 && layout[Number(m.header.rank)].shard === 0)
      .sort((a, b) => layout[Number(a.header.rank)].stage - layout[Number(b.header.rank)].stage)
      .forEach((m) => {
        const stats = this.asynchronous ? (m.header.stats as { delay: number; utilization: number; lrMultiplier: number; correction: number }) : sync(m);
        this.log.emit({ type: 'pipeline', step: at, stage: layout[Number(m.header.rank)].stage, ...stats, asynchronous: this.asynchronous });
      });
  }
}
