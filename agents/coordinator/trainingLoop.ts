import { stepsPerEpoch } from '../../engine/data/dataOrder.js';
import { MNIST_TRAIN } from '../../engine/data/mnistSplit.js';
import { placements } from '../../engine/plan/placement.js';
import type { Plan } from '../../engine/plan/plan.js';
import { floatsToBytes, type Message } from '../comm/frame.js';
import { checkpointForStages, saveCheckpoint } from './checkpoints.js';
import type { AgentInfo, CoordinatorConfig } from './coordinator.js';
import type { EventLog } from './eventLog.js';
import { collectProfile, stepTimeline, syncClocks, writeProfile } from './measurements.js';
import { clockMs } from '../runtime/timelineRecorder.js';
import { earliestAligned } from '../../engine/protocol/clockAlign.js';
import type { TimelineEvent } from '../../engine/protocol/timeline.js';

export interface TrainingContext {
  plan: Plan;
  config: CoordinatorConfig;
  active: AgentInfo[];
  log: EventLog;
  /** Wait for every active agent's reply to a round. */
  expect: (key: string) => Promise<Message[]>;
  broadcast: (header: Message['header']) => void;
}

const now = () => Date.now();

/**
 * The job from set-up to the final result: hand out stages, restore a checkpoint if resuming, run the
 * steps, evaluate every epoch, checkpoint periodically and at the end, and report.
 */
export async function runTraining(ctx: TrainingContext): Promise<void> {
  const { plan, config, active, log, expect, broadcast } = ctx;
  const layout = placements(plan);
  const peers = active.map((a, rank) => ({ rank, host: a.peerHost, port: a.peerPort }));
  const ready = expect('ready');
  active.forEach((agent, rank) => {
    agent.conn.send({ type: 'setup', rank, placement: layout[rank], plan, model: config.model, peers, syntheticStageMs: config.syntheticStageMs, overlapGradients: config.overlapGradients ?? true });
    log.emit({ type: 'agent', rank, stage: layout[rank].stage, replica: layout[rank].replica, host: agent.host, pid: agent.pid, backend: agent.backend });
  });
  await ready;

  let firstStep = 0;
  if (config.resumeFrom) {
    const { header, perStage } = checkpointForStages(config.resumeFrom, plan, config.model.name);
    const restored = expect('restored');
    active.forEach((agent, rank) => {
      const part = perStage[layout[rank].stage];
      agent.conn.send({ type: 'restore', tensors: part.tensors, optimizerStep: header.optimizer.step }, floatsToBytes(part.body));
    });
    await restored;
    firstStep = header.step;
    log.emit({ type: 'checkpoint', action: 'restored', step: firstStep, path: config.resumeFrom, bytes: 0, time: now() });
  }
  // Measurements before the first step: clock offsets (to line the agents' timelines up on this
  // process's clock) and, unless turned off, a profile of every stage's layers and links.
  const clocks = await syncClocks(ctx);
  if (config.profile !== false) {
    const profile = await collectProfile(ctx, layout, clocks, { batches: config.profileBatches, repeats: config.profileRepeats, synthetic: !!config.syntheticStageMs });
    let path: string | null = config.profilePath ?? null;
    try {
      if (path) writeProfile(path, profile);
    } catch (err) {
      log.emit({ type: 'log', level: 'warn', host: 'coordinator', rank: null, message: `Could not write ${path}: ${(err as Error).message}. The profile stays in the event stream.`, time: now() });
      path = null;
    }
    log.emit({ type: 'profile', profile, path });
  }
  const timelineEvery = config.timelineEverySteps ?? 10;
  let stepOrigin = clockMs();
  log.emit({ type: 'status', state: 'running', message: `${active.length} agents ready${firstStep ? `, resuming at step ${firstStep}` : ''}`, time: now() });

  let snapshotId = 0;
  const checkpoint = async (step: number) => {
    if (!config.checkpointDir) return;
    const replies = expect(`snapshot:${snapshotId}`);
    broadcast({ type: 'snapshot', snapshotId });
    snapshotId += 1;
    const snapshots = await replies;
    try {
      const saved = saveCheckpoint(config.checkpointDir, snapshots, { jobId: config.jobId, plan, model: config.model.name, step });
      log.emit({ type: 'checkpoint', action: 'saved', step, path: saved.file, bytes: saved.bytes, time: now() });
    } catch (err) {
      // A checkpoint that cannot be written (full disk) must not end the training it protects.
      log.emit({ type: 'log', level: 'error', host: 'coordinator', rank: null, message: (err as Error).message, time: now() });
    }
  };

  const perEpoch = stepsPerEpoch(MNIST_TRAIN, plan.globalBatch);
  const started = now();
  let evalId = 0;
  let last = { testAccuracy: 0, testLoss: 0 };
  const evaluate = async (step: number) => {
    const done = expect(`eval:${evalId}`);
    broadcast({ type: 'eval', evalId });
    evalId += 1;
    const replies = await done;
    const sum = (field: string) => replies.reduce((acc, m) => acc + Number(m.header[field]), 0);
    const count = sum('count');
    last = { testAccuracy: sum('correct') / count, testLoss: sum('lossSum') / count };
    log.emit({ type: 'eval', step, epoch: step / perEpoch, ...last });
  };

  const asynchronous = plan.schedule === 'async';
  let stepStart = now();
  const record = (step: number, replies: Message[]) => {
    const loss = replies.reduce((acc, m) => acc + Number(m.header.loss), 0);
    const stepMs = now() - stepStart;
    stepStart = now();
    if (!Number.isFinite(loss)) throw new Error(`The loss became ${loss} at step ${step}. Lower the learning rate or check the input data.`);
    // The slowest agent's wait for gradient communication after its last layer (what overlap did not hide).
    const commWaitMs = Math.max(0, ...replies.map((m) => Number(m.header.allReduceMs) || 0));
    log.emit({ type: 'step', step, epoch: (step + 1) / perEpoch, loss, stepMs, commWaitMs, samplesPerSec: plan.globalBatch / (stepMs / 1000), elapsedMs: now() - started });
    // An asynchronous step has no start the coordinator set: its window starts at its first pass.
    const origin = asynchronous
      ? earliestAligned(replies.map((m) => ({ events: (m.header.timeline as TimelineEvent[] | undefined) ?? [], offsetMs: clocks[Number(m.header.rank)]?.offsetMs ?? 0 })))
      : stepOrigin;
    const measured = origin === null ? null : stepTimeline(step, origin, replies, layout, clocks);
    if (measured) log.emit(measured);
    if (!asynchronous && plan.stages.length === 1) return;
    // One line per stage, from its first replica: every replica of a stage runs the same schedule.
    // A synchronous step is a barrier, so a stage's utilization is its compute over the whole step,
    // bubbles included; an asynchronous stage reports its own (it has no step barrier).
    const sync = (m: Message) => ({ delay: 0, utilization: Number(m.header.computeMs) / Math.max(stepMs, 1e-9), lrMultiplier: 1, correction: 0 });
    replies
      .filter((m) => layout[Number(m.header.rank)].replica === 0)
      .sort((a, b) => layout[Number(a.header.rank)].stage - layout[Number(b.header.rank)].stage)
      .forEach((m) => {
        const stats = asynchronous ? (m.header.stats as { delay: number; utilization: number; lrMultiplier: number; correction: number }) : sync(m);
        log.emit({ type: 'pipeline', step, stage: layout[Number(m.header.rank)].stage, ...stats });
      });
  };
  const boundary = async (step: number) => {
    const isLast = step === config.steps;
    if (isLast || step % config.evalEverySteps === 0) await evaluate(step);
    if (isLast || (config.checkpointEverySteps && step % config.checkpointEverySteps === 0)) await checkpoint(step);
  };

  let step = firstStep;
  while (step < config.steps) {
    if (!asynchronous) {
      const done = expect(`step:${step}`);
      stepStart = now(); // not before: the evaluation or checkpoint in between is not part of the step
      stepOrigin = clockMs();
      broadcast({ type: 'step', step, timeline: timelineEvery > 0 && step % timelineEvery === 0 });
      record(step, await done);
      step += 1;
      await boundary(step);
      continue;
    }
    // The asynchronous pipeline streams until the next evaluation or checkpoint, then drains.
    const stops = [config.steps, Math.floor(step / config.evalEverySteps + 1) * config.evalEverySteps];
    if (config.checkpointEverySteps) stops.push(Math.floor(step / config.checkpointEverySteps + 1) * config.checkpointEverySteps);
    const until = Math.min(...stops);
    broadcast({ type: 'asyncRun', fromStep: step, toStep: until, timelineEverySteps: timelineEvery });
    for (; step < until; step++) record(step, await expect(`step:${step}`));
    await boundary(step);
  }
  const seconds = (now() - started) / 1000;
  const stepsRun = config.steps - firstStep;
  // The final event is the last line of `shoal train --json`: status first, then the result.
  log.emit({ type: 'status', state: 'finished', time: now() });
  log.emit({
    type: 'final',
    final: true,
    ...last,
    steps: config.steps,
    epochs: config.steps / perEpoch,
    seconds,
    samplesPerSec: (stepsRun * plan.globalBatch) / Math.max(seconds, 1e-9),
    backends: [...new Set(active.map((a) => a.backend))],
  });
}
