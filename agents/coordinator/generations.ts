import { agentsNeeded, type Plan } from '../../engine/plan/plan.js';
import { planTeam } from '../../engine/plan/teamPlan.js';
import { virtualNodesPerReplica } from '../../engine/plan/virtualNodes.js';
import type { AgentRequest } from '../../engine/protocol/agentRequests.js';
import { floatsToBytes } from '../../engine/wire/frame.js';
import { AgentFailedError, AgentLostError, Generation } from './generation.js';
import { isHeldState, lostHolders, sourcesForStage, type HeldState } from './heldState.js';
import type { JobCheckpoints } from './jobCheckpoints.js';
import { stateForStages, type JobState } from './jobState.js';
import { syncClocks, type ClockEstimate } from './measurements.js';
import { describeMember, type Member } from './membership.js';
import type { TrainingContext, TrainingRun } from './trainingRun.js';

/** A live agent outside the generation, as the membership event lists it. */
type MembershipWaiting = { host: string; pid: number; reason: string };

/**
 * How long an agent's reported failure waits for the loss of a peer that would explain it (a dead
 * peer's connection closes at once; the coordinator hears of it a moment after the survivors do).
 * A failure nothing explains — bad data, a bug — ends the job after this.
 */
const FAILURE_GRACE_SEC = 6;

/** The ranks of a generation as a membership event lists them: placement, host and virtual nodes. */
export function placedAgents(gen: Generation) {
  const vnodes = gen.plan.stages.map((_, s) => virtualNodesPerReplica(gen.plan, s));
  return gen.members.map((m, rank) => {
    const p = gen.layout[rank];
    return { rank, stage: p.stage, replica: p.replica, shard: p.shard, host: m.host, pid: m.pid, virtualNodes: vnodes[p.stage][p.replica] };
  });
}

/**
 * The job's first plan gives rank r to the agent the deploy started for it (on the plan's device r),
 * whatever order the agents joined in; agents started without a slot follow, in join order.
 */
function bySlot(team: Member[]): Member[] {
  return [...team].sort((a, b) => (a.slot ?? Infinity) - (b.slot ?? Infinity) || a.id - b.id);
}

/**
 * The succession of generations of one job: each makes some members the job's agents under a plan
 * (links, stages, state handed over or restored, clocks aligned). A resize, a lost agent and the
 * start each begin a new one; the current one is `gen`.
 */
export class Generations {
  gen!: Generation;
  /** The running generation's clock offsets (measurements.ts), for its timelines. */
  clocks: ClockEstimate[] = [];
  private lastId = 0;
  /** Members that served an earlier generation: their links must be rebuilt for a new one. */
  private readonly served = new Set<Member>();
  /** Agents a resize released: shut down once their state is handed over, never waiting. */
  private readonly released = new Set<Member>();
  /** Why the live agents outside the running generation wait (the re-plan's words). */
  private waitingReason = '';

  constructor(
    private readonly run: TrainingRun,
    private readonly checkpoints: JobCheckpoints,
  ) {}

  /** The measurement rounds' view of the running generation. */
  context(): TrainingContext {
    const { config, log } = this.run;
    const gen = this.gen;
    return { plan: gen.plan, config, active: gen.members, log, ask: (request, payload) => gen.ask(request, payload) };
  }

  /**
   * Who is outside the running generation, as membership events say: live agents without a rank
   * (with the reason the last re-plan gave), and how many agents the job has lost so far.
   */
  outside(): { waiting: MembershipWaiting[]; lost: number } {
    const all = this.run.job.membership.members;
    const waiting = all.filter((m) => !m.lost && !this.released.has(m) && !this.gen.members.includes(m)).map((m) => ({ host: m.host, pid: m.pid, reason: this.waitingReason }));
    return { waiting, lost: all.filter((m) => m.lost).length };
  }

  /** A generation of the survivors of a loss, only to abort the step and gather their state: failures there are expected. */
  rescue(plan: Plan, survivors: Member[]): Generation {
    return new Generation(++this.lastId, plan, survivors, this.run.job.membership, this.run.timeoutSec, null);
  }

  /**
   * Start a generation from a state the coordinator holds, with every live agent but those in
   * `options.exclude` (ranks a resize releases): re-planned for all of them (planTeam: stages,
   * replicas, virtual nodes), or under `options.plan` as given (the first generation). Agents no
   * layout can use wait, said in the membership event. If an agent is lost while it is set up, it
   * tries again with whoever is left (the state is still in hand); so too when an agent that joins a
   * running job fails to set up (its data unreadable on its host, a broken install): it is fenced out
   * and the job goes on without it, rather than end on a newcomer's account. At the start of a job,
   * or when an agent that trained before fails, the failure ends the job as any unexplained one does.
   * Returns the step it continues at.
   */
  async establish(state: JobState | HeldState | null, at: number, reason: string, options: { plan?: Plan; exclude?: ReadonlySet<Member>; requestId?: string } = {}): Promise<number> {
    const { job, config, say } = this.run;
    let given = options.plan;
    for (const m of options.exclude ?? []) this.released.add(m);
    for (;;) {
      const team = job.membership.alive().filter((m) => !options.exclude?.has(m));
      if (team.length === 0) {
        const gone = job.membership.members.filter((m) => m.lost).map((m) => `${describeMember(m)} ${m.lost}`);
        throw new Error(`No live agent is left to go on with (${reason}): ${gone.join('; ') || 'none joined'}.`);
      }
      const { plan, waitingReason } = given ? { plan: given, waitingReason: 'the plan the job started with uses fewer agents; they take part when the team changes' } : planTeam(job.plan, config.model, team.length);
      const members = (given ? bySlot(team) : team).slice(0, agentsNeeded(plan));
      const waiting = team.slice(members.length).map((m) => ({ host: m.host, pid: m.pid, reason: waitingReason ?? '' }));
      const veterans = new Set(this.served);
      try {
        await this.start(plan, members, state, at, reason, waiting, options.requestId);
        return at;
      } catch (err) {
        const newcomerFailed = err instanceof AgentFailedError && veterans.size > 0 && !veterans.has(err.member);
        if (!(err instanceof AgentLostError) && !newcomerFailed) throw err;
        // A resize's own newcomer failing answers that request (its requester waits for this event), before the agent is fenced.
        say('warn', `${err.message.replace(/\.$/, '')}. Setting up again without it.`, newcomerFailed ? options.requestId : undefined);
        if (newcomerFailed) job.membership.lose(err.member, `could not join the job: ${err.message.replace(/\.$/, '')}`);
        given = undefined;
        if (isHeldState(state) && lostHolders(state).length > 0) {
          // The agent holding a stage's state is gone before handing it over: the last checkpoint has it.
          ({ state, step: at } = this.checkpoints.fallBack(
            'the state being handed over was lost with its holder',
            `${err.message} It held the state of its stage for the resize, and there is no checkpoint to fall back to.`,
          ));
        }
      }
    }
  }

  /** Make `members` the job's agents under `plan`, from `state` when given; `step` is the next step. */
  private async start(plan: Plan, members: Member[], state: JobState | HeldState | null, step: number, reason: string, waiting: MembershipWaiting[], requestId?: string): Promise<void> {
    const { job, config, log, timeoutSec, say } = this.run;
    this.gen?.close();
    const generationId = ++this.lastId;
    const gen = (this.gen = new Generation(generationId, plan, members, job.membership, timeoutSec, FAILURE_GRACE_SEC));
    const ports = members.map((m) => m.peerPort);
    if (members.some((m) => this.served.has(m))) {
      // Links of an earlier generation are dropped and every member listens afresh (a newcomer's
      // first listener is simply replaced): one round, answered with each new rank's port.
      for (const m of await gen.ask((rank) => ({ type: 'listen', generation: generationId, rank }))) members[m.header.rank].peerPort = ports[m.header.rank] = m.header.peerPort;
    }
    const peers = members.map((m, rank) => ({ rank, host: m.peerHost, port: ports[rank] }));
    members.forEach((m, rank) => {
      this.served.add(m);
      if (generationId === 1) log.emit({ type: 'agent', rank, stage: gen.layout[rank].stage, replica: gen.layout[rank].replica, host: m.host, pid: m.pid, backend: m.backend, ...(m.device ? { device: m.device } : {}) });
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
    this.waitingReason = waiting[0]?.reason ?? '';
    log.emit({ type: 'membership', generation: generationId, step, reason, requestId, agents: placedAgents(gen), ...this.outside() });
    this.clocks = await syncClocks(this.context());
  }
}
