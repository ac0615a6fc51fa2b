import { sampleCounts } from '../../engine/protocol/trainingSetup.js';
import { stepsPerEpoch } from '../../engine/data/dataOrder.js';
import { scheduleTraits } from '../../engine/plan/scheduleTraits.js';
import type { Message } from '../../engine/wire/frame.js';
import { VirtualNodeBalancer } from './balancer.js';
import { Evaluation } from './evaluation.js';
import { AgentLostError } from './generation.js';
import { Generations } from './generations.js';
import { JobCheckpoints } from './jobCheckpoints.js';
import { collectProfile, writeProfile } from './measurements.js';
import { rebalance } from './rebalance.js';
import { recover } from './recovery.js';
import { Resizes } from './resizes.js';
import { StepMetrics } from './stepMetrics.js';
import { runClockFrom } from './runClock.js';
import { now, trainingRun, type JobContext, type TrainingRun } from './trainingRun.js';

/** coordinator.ts queues resize requests for the loop. */
export type { ResizeRequest } from './trainingRun.js';

/**
 * The job from set-up to the final result, through any number of generations: hand out stages,
 * restore a checkpoint if resuming, run the steps, evaluate, checkpoint, and report. Between steps
 * it applies resize requests (all agents alive: the state is snapshot, re-sharded onto the new
 * plan, restored). When an agent is lost in a synchronous step, the step is discarded (survivors
 * undo it if they got as far as the update), the survivors' state is gathered, virtual nodes are
 * re-mapped onto them, and the same step runs again — so no step is lost or done twice, and the
 * parameters are those of an uninterrupted run. Without the state (the last replica of a stage was
 * lost, or ZeRO had sharded the optimizer state) it falls back to the last checkpoint.
 *
 * This file drives the steps; generations.ts sets up each generation, recovery.ts and resizes.ts
 * change membership, jobCheckpoints.ts, evaluation.ts and stepMetrics.ts do the boundary work.
 */
export async function runTraining(job: JobContext): Promise<void> {
  const run = trainingRun(job);
  const { config, log } = run;
  const checkpoints = new JobCheckpoints(run);
  const generations = new Generations(run, checkpoints);
  const resizes = new Resizes(run, generations, checkpoints);

  // The first generation: the first agents to join, the plan as given, a checkpoint when resuming.
  const resumed = checkpoints.resumePoint();
  const firstStep = resumed?.step ?? 0;
  const startPlan = job.startPlan ?? job.plan;
  await generations.establish(resumed?.state ?? null, firstStep, config.resumeFrom ? 'resumed from a checkpoint' : 'start', { plan: startPlan });
  if (config.resumeFrom) log.emit({ type: 'checkpoint', action: 'restored', step: firstStep, path: config.resumeFrom, bytes: 0, time: now() });
  if (config.profile !== false) await profileJob(run, generations);
  const timelineEvery = config.timelineEverySteps ?? 10;
  log.emit({ type: 'status', state: 'running', message: `${generations.gen.members.length} agents ready${firstStep ? `, resuming at step ${firstStep}` : ''}`, time: now() });

  const perEpoch = stepsPerEpoch(sampleCounts(config.training).trainSamples, job.plan.globalBatch);
  const evaluation = new Evaluation(log, perEpoch, { classes: config.training?.classes, lastStep: config.steps });
  // An asynchronous pipeline has no step barrier: it streams steps, cannot be resized, re-balanced
  // or recovered between steps (no single state describes its applied updates).
  const asynchronous = !scheduleTraits(job.plan.schedule).stepBarrier;
  const balancer = new VirtualNodeBalancer();
  // After a coordinator restart the clock goes on from the first coordinator's start (runClock.ts).
  const clock = runClockFrom(log.replayed);
  // The restarted history's last reader: what studios ask for again is read back from the file.
  log.forgetReplayed();
  const metrics = new StepMetrics(log, perEpoch, asynchronous, balancer, clock?.startedAt);
  const record = (at: number, replies: Message[]) => metrics.record(generations.gen, generations.clocks, at, replies);
  /** Evaluation and checkpoint after step `at` when they are due (always after the last). */
  const boundary = async (at: number) => {
    const isLast = at === config.steps;
    if (isLast || at % config.evalEverySteps === 0) await evaluation.run(generations.gen, at);
    if (isLast || (config.checkpointEverySteps && at % config.checkpointEverySteps === 0)) await checkpoints.save(generations.gen, at);
  };

  let step = firstStep;
  /** The boundary (evaluation, checkpoint) after a step is owed until it completes. */
  let boundaryOwed = false;
  while (step < config.steps || boundaryOwed) {
    const inStep = !boundaryOwed;
    try {
      if (boundaryOwed) {
        await boundary(step);
        boundaryOwed = false;
        continue;
      }
      if (job.stop?.requested) return await checkpoints.saveAndStop(generations.gen, step);
      const request = asynchronous ? null : resizes.due();
      if (request) {
        step = await resizes.apply(request, step);
        balancer.reset();
        continue;
      }
      if (!asynchronous && config.rebalance !== false && (await rebalance(generations, balancer, log, step))) continue;
      const gen = generations.gen;
      if (!asynchronous) {
        metrics.begin();
        record(step, await gen.ask({ type: 'step', step, timeline: timelineEvery > 0 && step % timelineEvery === 0 }));
        step += 1;
        boundaryOwed = true;
        continue;
      }
      // The asynchronous pipeline streams until the next evaluation or checkpoint, then drains.
      const stops = [config.steps, Math.floor(step / config.evalEverySteps + 1) * config.evalEverySteps];
      if (config.checkpointEverySteps) stops.push(Math.floor(step / config.checkpointEverySteps + 1) * config.checkpointEverySteps);
      const until = Math.min(...stops);
      const stepReplies = gen.askSteps({ type: 'asyncRun', fromStep: step, toStep: until, timelineEverySteps: timelineEvery });
      for (; step < until; step++) record(step, await stepReplies(step));
      boundaryOwed = true;
    } catch (err) {
      // An asynchronous pipeline has applied updates no single state describes: it cannot be undone.
      if (!(err instanceof AgentLostError) || asynchronous) throw err;
      step = await recover(run, generations, checkpoints, err, step, inStep);
      balancer.reset();
      if (!inStep) boundaryOwed = true;
    }
  }
  const seconds = (now() - metrics.started) / 1000;
  const stepsRun = config.steps - (clock?.firstStep ?? firstStep);
  // The final event is the last line of `shoal train --json`: status first, then the result.
  log.emit({ type: 'status', state: 'finished', time: now() });
  log.emit({
    type: 'final',
    final: true,
    ...evaluation.last,
    steps: config.steps,
    epochs: config.steps / perEpoch,
    seconds,
    samplesPerSec: (stepsRun * job.plan.globalBatch) / Math.max(seconds, 1e-9),
    backends: [...new Set(generations.gen.members.map((a) => a.backend))],
  });
}

/** Time the layers and links on the agents (calibrates the cost model), write profile.json and report it. */
async function profileJob(run: TrainingRun, generations: Generations): Promise<void> {
  const { config, log, say } = run;
  const profile = await collectProfile(generations.context(), generations.gen.layout, generations.clocks, { batches: config.profileBatches, repeats: config.profileRepeats, synthetic: !!config.syntheticStageMs, full: config.profileFull });
  let path: string | null = config.profilePath ?? null;
  try {
    if (path) writeProfile(path, profile);
  } catch (err) {
    say('warn', `Could not write ${path}: ${(err as Error).message}. The profile stays in the event stream.`);
    path = null;
  }
  log.emit({ type: 'profile', profile, path });
}
