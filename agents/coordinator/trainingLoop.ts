import { stepsPerEpoch } from '../../engine/data/dataOrder.js';
import { MNIST_TRAIN } from '../../engine/data/mnistSplit.js';
import { replan } from '../../engine/plan/elastic.js';
import { agentsNeeded, type Plan } from '../../engine/plan/plan.js';
import { virtualNodesPerReplica } from '../../engine/plan/virtualNodes.js';
import { earliestAligned } from '../../engine/protocol/clockAlign.js';
import type { TimelineEvent } from '../../engine/protocol/timeline.js';
import type { AgentRequest } from '../../engine/protocol/agentRequests.js';
import { floatsToBytes, type Message } from '../../engine/wire/frame.js';
import { latestCheckpointIn } from '../../engine/wire/checkpointFolder.js';
import { loadCheckpoint, saveCheckpoint } from './checkpoints.js';
import type { CoordinatorConfig } from '../../engine/protocol/processConfig.js';
import type { EventLog } from './eventLog.js';
import { heldStateFrom, isHeldState, lostHolders, sourcesForStage, type HeldState } from './heldState.js';
import { VirtualNodeBalancer } from './balancer.js';
import { AgentLostError, Generation } from './generation.js';
import { stateForStages, stateFromLocalParts, stateFromSnapshots, type JobState } from './jobState.js';
import { collectProfile, stepTimeline, syncClocks, writeProfile, type ClockEstimate } from './measurements.js';
import { describeMember, type Member, type Membership } from './membership.js';
import { clockMs } from '../runtime/timelineRecorder.js';

/** What the measurement rounds (measurements.ts) need of the running generation. */
export interface TrainingContext {
  plan: Plan;
  config: CoordinatorConfig;
  active: Member[];
  log: EventLog;
  /** Ask every active agent and wait for each one's reply. */
  ask: Generation['ask'];
}

/** A change of membership asked for while the job runs (`shoal resize`, the studio). */
export interface ResizeRequest {
  /** Agents expected to join (they connect on their own); the resize waits for them. */
  add: number;
  /** Ranks of the current generation to release. */
  remove: number[];
  /** When the training loop first saw it (for its timeout). */
  since?: number;
  /** Named in the membership event that applies it, so the requester can tell it is done. */
  id?: string;
}

export interface JobContext {
  config: CoordinatorConfig;
  /** The plan the user chose; later generations keep its stages, batch and virtual nodes. */
  plan: Plan;
  /** The first generation's plan when it is not `plan`: a restarted coordinator's, re-planned for the agents the job had. */
  startPlan?: Plan;
  membership: Membership;
  log: EventLog;
  /** Resize requests not yet applied, oldest first; the loop applies them at step boundaries. */
  resizes: ResizeRequest[];
}

const now = () => Date.now();

/**
 * The job from set-up to the final result, through any number of generations: hand out stages,
 * restore a checkpoint if resuming, run the steps, evaluate, checkpoint, and report. Between steps
 * it applies resize requests (all agents alive: the state is snapshot, re-sharded onto the new
 * plan, restored). When an agent is lost in a synchronous step, the step is discarded (survivors
 * undo it if they got as far as the update), the survivors' state is gathered, virtual nodes are
 * re-mapped onto them, and the same step runs again — so no step is lost or done twice, and the
 * parameters are those of an uninterrupted run. Without the state (the last replica of a stage was
 * lost, or ZeRO had sharded the optimizer state) it falls back to the last checkpoint.
 */
export async function runTraining(job: JobContext): Promise<void> {
  const { config, membership, log } = job;
  // How checkpoints name the model: a built-in model's name, or the model file a user's came from.
  const modelName = config.model.source?.modelFile ?? config.model.name;
  const say = (level: 'info' | 'warn' | 'error', message: string) => log.emit({ type: 'log', level, host: 'coordinator', rank: null, message, time: now() });
  let generationId = 0;
  let gen!: Generation;
  let clocks: ClockEstimate[] = [];
  /** Members that served an earlier generation: their links must be rebuilt for a new one. */
  const served = new Set<Member>();
  const timeoutSec = config.roundTimeoutSec ?? 300;
  const context = (g: Generation): TrainingContext => ({ plan: g.plan, config, active: g.members, log, ask: (request, payload) => g.ask(request, payload) });

  /** Make `members` the job's agents under `plan`, from `state` when given; `step` is the next step. */
  const startGeneration = async (plan: Plan, members: Member[], state: JobState | HeldState | null, step: number, reason: string, requestId?: string): Promise<void> => {
    gen?.close();
    gen = new Generation(++generationId, plan, members, membership, timeoutSec, (config.heartbeatTimeoutSec ?? 5) + 1);
    const ports = members.map((m) => m.peerPort);
    if (members.some((m) => served.has(m))) {
      // Links of an earlier generation are dropped and every member listens afresh (a newcomer's
      // first listener is simply replaced): one round, answered with each new rank's port.
      for (const m of await gen.ask((rank) => ({ type: 'listen', generation: generationId, rank }))) members[m.header.rank].peerPort = ports[m.header.rank] = m.header.peerPort;
    }
    const peers = members.map((m, rank) => ({ rank, host: m.peerHost, port: ports[rank] }));
    members.forEach((m, rank) => {
      served.add(m);
      if (generationId === 1) log.emit({ type: 'agent', rank, stage: gen.layout[rank].stage, replica: gen.layout[rank].replica, host: m.host, pid: m.pid, backend: m.backend });
    });
    await gen.ask((rank) => ({ type: 'setup', generation: generationId, rank, placement: gen.layout[rank], plan, model: config.model, training: config.training, peers, syntheticStageMs: config.syntheticStageMs, overlapGradients: config.overlapGradients ?? true }));
    if (isHeldState(state)) {
      // A resize: every member fetches its stage's tensors from the agents holding them.
      const restored = await gen.ask((rank) => ({ type: 'fetchState', sources: sourcesForStage(state, plan, gen.layout[rank].stage), optimizerStep: state.optimizerStep }));
      const bytes = restored.reduce((n, m) => n + (m.header.bytes ?? 0), 0);
      for (const h of state.holders) if (!h.member.lost) h.member.conn.send({ type: 'dropState' } satisfies AgentRequest);
      say('info', `State handed over peer to peer: ${(bytes / 2 ** 20).toFixed(2)} MiB from ${state.holders.length} holder(s) to ${members.length} agent(s); none of it through the coordinator.`);
    } else if (state) {
      const perStage = stateForStages(state, plan);
      const partOf = (rank: number) => perStage[gen.layout[rank].stage];
      await gen.ask(
        (rank) => ({ type: 'restore', tensors: partOf(rank).tensors, optimizerStep: state.optimizerStep }),
        (rank) => floatsToBytes(partOf(rank).body),
      );
    }
    const vnodes = plan.stages.map((_, s) => virtualNodesPerReplica(plan, s));
    log.emit({
      type: 'membership',
      generation: generationId,
      step,
      reason,
      requestId,
      agents: members.map((m, rank) => {
        const p = gen.layout[rank];
        return { rank, stage: p.stage, replica: p.replica, shard: p.shard, host: m.host, pid: m.pid, virtualNodes: vnodes[p.stage][p.replica] };
      }),
    });
    clocks = await syncClocks(context(gen));
  };

  /**
   * Start a generation from a state the coordinator holds; if an agent is lost while it is set up,
   * try again with whoever is left (the state is still in hand). Without `plan`/`members`: re-plan
   * onto every live agent.
   */
  const establish = async (state: JobState | HeldState | null, at: number, reason: string, plan?: Plan, members?: Member[], requestId?: string): Promise<number> => {
    for (;;) {
      const chosen = members ?? membership.alive();
      const p = plan ?? replan(job.plan, config.model, chosen.length);
      try {
        await startGeneration(p, chosen.slice(0, agentsNeeded(p)), state, at, reason, requestId);
        return at;
      } catch (err) {
        if (!(err instanceof AgentLostError)) throw err;
        say('warn', `${err.message} Setting up again without it.`);
        plan = undefined;
        members = undefined;
        if (isHeldState(state) && lostHolders(state).length > 0) {
          // The agent holding a stage's state is gone before handing it over: the last checkpoint has it.
          const file = config.checkpointDir ? latestCheckpointIn(config.checkpointDir) : null;
          if (!file) throw new Error(`${err.message} It held the state of its stage for the resize, and there is no checkpoint to fall back to. Resume the job with \`shoal resume\` from an earlier run folder, or restart it.`);
          const loaded = loadCheckpoint(file, modelName);
          state = loaded.state;
          at = loaded.header.step;
          say('warn', `Falling back to ${file} (step ${at}): the state being handed over was lost with its holder.`);
          log.emit({ type: 'checkpoint', action: 'restored', step: at, path: file, bytes: 0, time: now() });
        }
      }
    }
  };

  // The first generation: the first agents to join, the plan as given, a checkpoint when resuming.
  let step = 0;
  let resumed: JobState | null = null;
  if (config.resumeFrom) {
    const { header, state } = loadCheckpoint(config.resumeFrom, modelName);
    resumed = state;
    step = header.step;
  }
  const startPlan = job.startPlan ?? job.plan;
  await establish(resumed, step, config.resumeFrom ? 'resumed from a checkpoint' : 'start', startPlan, membership.alive().slice(0, agentsNeeded(startPlan)));
  if (config.resumeFrom) log.emit({ type: 'checkpoint', action: 'restored', step, path: config.resumeFrom, bytes: 0, time: now() });
  const firstStep = step;
  if (config.profile !== false) {
    const profile = await collectProfile(context(gen), gen.layout, clocks, { batches: config.profileBatches, repeats: config.profileRepeats, synthetic: !!config.syntheticStageMs, full: config.profileFull });
    let path: string | null = config.profilePath ?? null;
    try {
      if (path) writeProfile(path, profile);
    } catch (err) {
      say('warn', `Could not write ${path}: ${(err as Error).message}. The profile stays in the event stream.`);
      path = null;
    }
    log.emit({ type: 'profile', profile, path });
  }
  const timelineEvery = config.timelineEverySteps ?? 10;
  log.emit({ type: 'status', state: 'running', message: `${gen.members.length} agents ready${firstStep ? `, resuming at step ${firstStep}` : ''}`, time: now() });

  /** The state of every stage, gathered by the running generation (all its agents alive). */
  const snapshot = async (): Promise<JobState> => stateFromSnapshots(await gen.ask({ type: 'snapshot' }));
  /** The same round, but each stage's state stays with its holder for a peer-to-peer hand-over. */
  const holdSnapshot = async (): Promise<HeldState> => heldStateFrom(await gen.ask({ type: 'snapshot', keep: true }), gen.members);
  const checkpoint = async (at: number) => {
    if (!config.checkpointDir) return;
    const state = await snapshot();
    try {
      const saved = saveCheckpoint(config.checkpointDir, state, { jobId: config.jobId, plan: gen.plan, model: modelName, step: at });
      log.emit({ type: 'checkpoint', action: 'saved', step: at, path: saved.file, bytes: saved.bytes, time: now() });
    } catch (err) {
      // A checkpoint that cannot be written (full disk) must not end the training it protects.
      say('error', (err as Error).message);
    }
  };

  const perEpoch = stepsPerEpoch(config.training?.trainSamples ?? MNIST_TRAIN, job.plan.globalBatch);
  const started = now();
  let evalId = 0;
  let last: { testAccuracy?: number; testLoss: number } = { testAccuracy: 0, testLoss: 0 };
  const evaluate = async (at: number) => {
    const replies = await gen.ask({ type: 'eval', evalId });
    evalId += 1;
    const sum = (field: 'count' | 'total' | 'lossSum' | 'correct') => replies.reduce((acc, m) => acc + m.header[field], 0);
    const count = sum('count');
    // No validation samples (no val/ folder and no --validation-split): nothing to report.
    if (count === 0) return;
    const total = sum('total');
    last = { testLoss: sum('lossSum') / count, ...(total > 0 ? { testAccuracy: sum('correct') / total } : {}) };
    log.emit({ type: 'eval', step: at, epoch: at / perEpoch, ...last });
  };

  const asynchronous = job.plan.schedule === 'async';
  const balancer = new VirtualNodeBalancer();
  let stepStart = now();
  let stepOrigin = clockMs();
  const record = (at: number, replies: Message[]) => {
    const { layout, plan } = gen;
    const loss = replies.reduce((acc, m) => acc + Number(m.header.loss), 0);
    const stepMs = now() - stepStart;
    stepStart = now();
    if (!Number.isFinite(loss)) throw new Error(`The loss became ${loss} at step ${at}. Lower the learning rate or check the input data.`);
    // The slowest agent's wait for gradient communication after its last layer (what overlap did not hide).
    const commWaitMs = Math.max(0, ...replies.map((m) => Number(m.header.allReduceMs) || 0));
    log.emit({ type: 'step', step: at, epoch: (at + 1) / perEpoch, loss, stepMs, commWaitMs, samplesPerSec: plan.globalBatch / (stepMs / 1000), elapsedMs: now() - started });
    if (!asynchronous) balancer.observe(plan, layout, replies);
    // An asynchronous step has no start the coordinator set: its window starts at its first pass.
    const origin = asynchronous
      ? earliestAligned(replies.map((m) => ({ events: (m.header.timeline as TimelineEvent[] | undefined) ?? [], offsetMs: clocks[Number(m.header.rank)]?.offsetMs ?? 0 })))
      : stepOrigin;
    const measured = origin === null ? null : stepTimeline(at, origin, replies, layout, clocks);
    if (measured) log.emit(measured);
    if (!asynchronous && plan.stages.length === 1) return;
    // One line per stage, from its first replica: every replica of a stage runs the same schedule.
    // A synchronous step is a barrier, so a stage's utilization is its compute over the whole step,
    // bubbles included; an asynchronous stage reports its own (it has no step barrier).
    const sync = (m: Message) => ({ delay: 0, utilization: Number(m.header.computeMs) / Math.max(stepMs, 1e-9), lrMultiplier: 1, correction: 0 });
    replies
      .filter((m) => layout[Number(m.header.rank)].replica === 0 && layout[Number(m.header.rank)].shard === 0)
      .sort((a, b) => layout[Number(a.header.rank)].stage - layout[Number(b.header.rank)].stage)
      .forEach((m) => {
        const stats = asynchronous ? (m.header.stats as { delay: number; utilization: number; lrMultiplier: number; correction: number }) : sync(m);
        log.emit({ type: 'pipeline', step: at, stage: layout[Number(m.header.rank)].stage, ...stats });
      });
  };

  const newcomers = () => membership.alive().filter((m) => !served.has(m));
  /**
   * The oldest resize request, once it can be applied: training goes on while the agents it adds
   * start and join. One whose agents do not come within the round timeout is dropped, said so.
   */
  const dueResize = (): ResizeRequest | null => {
    const request = job.resizes[0];
    if (!request) return null;
    request.since ??= now();
    if (newcomers().length >= request.add) return job.resizes.shift()!;
    if (now() - request.since > timeoutSec * 1000) {
      job.resizes.shift();
      say('warn', `Resize dropped: only ${newcomers().length} of ${request.add} new agent(s) joined within ${timeoutSec} s. Check their logs.`);
    }
    return null;
  };

  /** Apply a resize at a step boundary: every current agent is alive, so nothing is lost. */
  const resize = async (request: ResizeRequest) => {
    const staying = gen.members.filter((_, rank) => !request.remove.includes(rank));
    const members = [...staying, ...newcomers().slice(0, request.add)];
    const plan = replan(job.plan, config.model, members.length);
    const state = await holdSnapshot();
    const released = gen.members.filter((m) => !members.includes(m));
    const at = await establish(state, step, `resize: ${[request.add ? `+${request.add}` : '', request.remove.length ? `−rank ${request.remove.join(', ')}` : ''].filter(Boolean).join(' ')}`, plan, members, request.id);
    // Released agents go once their state (if they held some) has been handed over.
    for (const m of released) m.conn.send({ type: 'shutdown' });
    return at;
  };

  /**
   * Go on without lost agents: discard the step in flight (`at`), rebuild the state from the
   * survivors or, failing that, from the last checkpoint, re-plan onto who is left, and return the
   * step to continue at.
   */
  const recover = async (lost: AgentLostError, at: number, inStep: boolean): Promise<number> => {
    const survivors = gen.members.filter((m) => !m.lost);
    const plan = gen.plan;
    gen.close();
    say('warn', `${lost.message} ${inStep ? `Discarding step ${at} and going on` : 'Going on'} with ${survivors.length} agent(s).`);
    // A temporary generation of the survivors: abort (close links, undo the step) and report local state.
    const rescue = new Generation(++generationId, plan, survivors, membership, timeoutSec, null);
    await rescue.ask({ type: 'abort', step: at });
    let state: JobState | null = null;
    let next = at;
    try {
      state = stateFromLocalParts(await rescue.ask({ type: 'localState' }), plan);
    } catch (err) {
      if (err instanceof AgentLostError) throw err;
      const file = config.checkpointDir ? latestCheckpointIn(config.checkpointDir) : null;
      if (!file) throw new Error(`${lost.message} The job cannot go on: ${(err as Error).message}, and there is no checkpoint to fall back to. Resume it with \`shoal resume\` once enough agents are back.`);
      const loaded = loadCheckpoint(file, modelName);
      state = loaded.state;
      next = loaded.header.step;
      say('warn', `Falling back to ${file} (step ${next}): ${(err as Error).message}.`);
      log.emit({ type: 'checkpoint', action: 'restored', step: next, path: file, bytes: 0, time: now() });
    }
    rescue.close();
    await establish(state, next, `lost ${describeMember(lost.member, lost.rank)}`);
    return next;
  };

  /** Give faster replicas more virtual nodes when that shortens the step enough (same ranks and links). */
  const rebalance = async (): Promise<boolean> => {
    const proposal = config.rebalance === false || asynchronous ? null : balancer.proposal(gen.plan);
    if (!proposal) return false;
    const plan: Plan = { ...gen.plan, virtualNodes: { total: proposal.perReplica.reduce((a, b) => a + b, 0), perReplica: proposal.perReplica } };
    await gen.ask({ type: 'remap', plan });
    gen.plan = plan;
    balancer.reset();
    const vnodes = plan.stages.map((_, s) => virtualNodesPerReplica(plan, s));
    log.emit({
      type: 'membership',
      generation: gen.id,
      step,
      reason: `rebalance by measured speed: compute per step ${proposal.beforeMs.toFixed(0)} → ${proposal.afterMs.toFixed(0)} ms (predicted)`,
      agents: gen.members.map((m, rank) => {
        const p = gen.layout[rank];
        return { rank, stage: p.stage, replica: p.replica, shard: p.shard, host: m.host, pid: m.pid, virtualNodes: vnodes[p.stage][p.replica] };
      }),
    });
    return true;
  };

  const boundary = async (at: number) => {
    const isLast = at === config.steps;
    if (isLast || at % config.evalEverySteps === 0) await evaluate(at);
    if (isLast || (config.checkpointEverySteps && at % config.checkpointEverySteps === 0)) await checkpoint(at);
  };

  step = firstStep;
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
      const request = asynchronous ? null : dueResize();
      if (request) {
        step = await resize(request);
        balancer.reset();
        continue;
      }
      if (await rebalance()) continue;
      if (!asynchronous) {
        stepStart = now(); // not before: the evaluation or checkpoint in between is not part of the step
        stepOrigin = clockMs();
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
      step = await recover(err, step, inStep);
      balancer.reset();
      if (!inStep) boundaryOwed = true;
    }
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
    samplesPerSec: (stepsRun * job.plan.globalBatch) / Math.max(seconds, 1e-9),
    backends: [...new Set(gen.members.map((a) => a.backend))],
  });
}
