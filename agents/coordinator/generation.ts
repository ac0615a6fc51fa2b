import { placements, type Placement } from '../../engine/plan/placement.js';
import type { Plan } from '../../engine/plan/plan.js';
import { nthRequestId, type AgentRequest, type AgentRequestOf, type RequestId } from '../../engine/protocol/agentRequests.js';
import type { AgentReply, ReplyTo } from '../../engine/protocol/agentReplies.js';
import { unhandled } from '../../engine/protocol/wireHeader.js';
import type { Message } from '../../engine/wire/frame.js';
import { clockMs } from '../runtime/timelineRecorder.js';
import { describeMember, type Member, type MemberMessage, type Membership } from './membership.js';

/** A member of the running generation was lost: the job can go on without it (elastic recovery). */
export class AgentLostError extends Error {
  constructor(readonly member: Member, readonly rank: number, reason: string) {
    super(`Agent ${describeMember(member, rank)} ${reason.replace(/\.$/, '')}.`);
  }
}

/** A member reported a failure no loss explains (bad data, a bug): which one, for a caller that can leave it out. */
export class AgentFailedError extends Error {
  constructor(readonly member: Member, readonly rank: number, message: string) {
    super(message);
  }
}

/** Request ids are unique for the coordinator's life: a late reply to an old generation's request can never answer a new one. */
let requestIds = 0;
function reserveRequestIds(count: number): RequestId {
  const first = requestIds as RequestId;
  requestIds += count;
  return first;
}

type Reply = Message<AgentReply>;
/** A request that is answered once by every member, as it reads before its id is given. */
type Ask = Extract<AgentRequest, { requestId: RequestId }> extends infer Q ? (Q extends unknown ? Omit<Q, 'requestId'> : never) : never;

/**
 * One generation of a job: a plan and the members holding its ranks (rank i = members[i]). Rounds
 * are the coordinator's requests answered by every member, paired by request id. A round never
 * hangs: it fails when it times out (naming the ranks it waits for), when a member reports a failure,
 * or — as an AgentLostError the training loop recovers from — when a member is lost.
 */
export class Generation {
  readonly layout: Placement[];
  private readonly pending = new Map<RequestId, { replies: Map<number, Reply>; done: (m: Reply[]) => void; fail: (e: Error) => void }>();
  /** Replies to rounds not yet awaited (an asynchronous pipeline reports steps at its own pace). */
  private readonly early = new Map<RequestId, Map<number, Reply>>();
  private readonly unsubscribe: () => void;
  private broken: Error | null = null;
  private failureTimer: NodeJS.Timeout | undefined;

  constructor(
    readonly id: number,
    public plan: Plan,
    readonly members: Member[],
    membership: Membership,
    private readonly timeoutSec: number,
    /**
     * How long a reported failure waits for a lost member that would explain it; null: failures are
     * expected and ignored (a rescue round after a loss, while survivors' steps fail).
     */
    private readonly lossGraceSec: number | null,
  ) {
    this.layout = placements(plan);
    members.forEach((member, rank) => {
      member.onMessage = (m) => this.received(rank, m);
    });
    this.unsubscribe = membership.whenLost((member, reason) => {
      const rank = this.members.indexOf(member);
      if (rank >= 0) this.breakWith(new AgentLostError(member, rank, reason));
    });
  }

  private received(rank: number, m: MemberMessage): void {
    const h = m.header;
    switch (h.type) {
      case 'failed':
        return this.failed(rank, h);
      case 'clockReply':
        // The arrival stamp of an NTP-style ping reply, taken before anything else delays it.
        h.receivedMs = clockMs();
        return this.pair(rank, { header: h, payload: m.payload });
      case 'listening':
      case 'ready':
      case 'stepDone':
      case 'evalDone':
      case 'profileDone':
      case 'snapshotData':
      case 'restored':
      case 'aborted':
      case 'localStateData':
      case 'remapped':
        return this.pair(rank, { header: h, payload: m.payload });
      default:
        return unhandled(h);
    }
  }

  private failed(rank: number, h: Extract<MemberMessage['header'], { type: 'failed' }>): void {
    // Only failures of work this generation asked for count: a survivor's report of the step a
    // lost peer broke can arrive after the job has moved on to a new generation.
    if (this.lossGraceSec === null || h.generation !== this.id) return;
    // A survivor's step fails when a peer dies; the coordinator may learn of the death a moment
    // later. Only a failure no loss explains within the grace period ends the job.
    const error = new AgentFailedError(this.members[rank], rank, `Agent ${describeMember(this.members[rank], rank)} failed${h.step === null ? '' : ` at step ${h.step}`}: ${h.message}`);
    clearTimeout(this.failureTimer);
    this.failureTimer = setTimeout(() => this.breakWith(error), this.lossGraceSec * 1000);
  }

  private pair(rank: number, m: Reply): void {
    const id = m.header.requestId;
    const round = this.pending.get(id);
    if (!round) {
      this.early.set(id, (this.early.get(id) ?? new Map<number, Reply>()).set(rank, m));
      return;
    }
    round.replies.set(rank, m);
    if (round.replies.size === this.members.length) {
      this.pending.delete(id);
      round.done([...round.replies.values()]);
    }
  }

  private breakWith(error: Error): void {
    if (this.broken) return;
    clearTimeout(this.failureTimer);
    this.broken = error;
    for (const round of this.pending.values()) round.fail(error);
    this.pending.clear();
  }

  /** Why this generation can no longer run rounds, or null. */
  get failure(): Error | null {
    return this.broken;
  }

  /**
   * Ask every member — the same request, or each its own (`request(rank)`, with `payload(rank)`) —
   * and wait for every member's reply, paired by the request id given here.
   */
  ask<R extends Ask>(request: R | ((rank: number) => R), payload?: (rank: number) => Uint8Array | undefined): Promise<Array<Message<ReplyTo<R['type']>>>> {
    const requestId = reserveRequestIds(1);
    const first = typeof request === 'function' ? request(0) : request;
    const replies = this.collect<ReplyTo<R['type']>>(requestId, 'step' in first ? `${first.type} ${String(first.step)}` : first.type);
    this.members.forEach((_, rank) => {
      const body = typeof request === 'function' ? request(rank) : request;
      this.send(rank, { ...body, requestId } as AgentRequest, payload?.(rank));
    });
    return replies;
  }

  /**
   * Start an asynchronous run of steps [fromStep, toStep): each step is answered like a request of
   * its own (agentRequests.ts). Returns the wait for one step's replies, to be called in step order.
   */
  askSteps(run: Omit<AgentRequestOf<'asyncRun'>, 'firstRequestId'>): (step: number) => Promise<Array<Message<ReplyTo<'asyncRun'>>>> {
    const firstRequestId = reserveRequestIds(Math.max(0, run.toStep - run.fromStep));
    this.broadcast({ ...run, firstRequestId });
    return (step) => this.collect<ReplyTo<'asyncRun'>>(nthRequestId(firstRequestId, step - run.fromStep), `step ${step}`);
  }

  /** Wait for every member's reply to request `id` (`what` names it in a timeout). */
  private collect<R extends AgentReply>(id: RequestId, what: string): Promise<Array<Message<R>>> {
    if (this.broken) return Promise.reject(this.broken);
    let timer: NodeJS.Timeout | undefined;
    return new Promise<Reply[]>((resolve, reject) => {
      const replies = this.early.get(id) ?? new Map<number, Reply>();
      this.early.delete(id);
      if (replies.size === this.members.length) return resolve([...replies.values()]);
      this.pending.set(id, { replies, done: resolve, fail: reject });
      timer = setTimeout(() => {
        const missing = this.members.map((m, rank) => ({ m, rank })).filter(({ rank }) => !replies.has(rank));
        this.pending.delete(id);
        reject(new Error(`Timed out after ${this.timeoutSec} s waiting for ${what} from ${missing.map(({ m, rank }) => describeMember(m, rank)).join(', ')}. Check those agents' logs; a stuck agent can be killed and the job goes on without it.`));
      }, this.timeoutSec * 1000);
    })
      .then((replies) => replies as Array<Message<R>>)
      .finally(() => clearTimeout(timer));
  }

  private broadcast(header: AgentRequest): void {
    for (const m of this.members) if (!m.lost) m.conn.send(header);
  }

  private send(rank: number, header: AgentRequest, payload?: Uint8Array): void {
    const m = this.members[rank];
    if (!m.lost) m.conn.send(header, payload);
  }

  /** Detach from the members (a newer generation takes over their messages). */
  close(): void {
    this.unsubscribe();
    clearTimeout(this.failureTimer);
    this.breakWith(new Error(`generation ${this.id} was replaced`));
  }
}
