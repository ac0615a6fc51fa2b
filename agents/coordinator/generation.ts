import { placements, type Placement } from '../../engine/plan/placement.js';
import type { Plan } from '../../engine/plan/plan.js';
import type { Message } from '../../engine/wire/frame.js';
import { clockMs } from '../runtime/timelineRecorder.js';
import { describeMember, type Member, type Membership } from './membership.js';

/** A member of the running generation was lost: the job can go on without it (elastic recovery). */
export class AgentLostError extends Error {
  constructor(readonly member: Member, readonly rank: number, reason: string) {
    super(`Agent ${describeMember(member, rank)} ${reason.replace(/\.$/, '')}.`);
  }
}

/** The round key a reply answers, or null for messages that answer nothing. */
function replyKey(h: Message['header']): string | null {
  switch (h.type) {
    case 'clockReply':
      return `clock:${h.seq}`;
    case 'profileDone':
      return 'profile';
    case 'stepDone':
      return `step:${h.step}`;
    case 'evalDone':
      return `eval:${h.evalId}`;
    case 'snapshotData':
      return `snapshot:${h.snapshotId}`;
    case 'listening':
      return `listening:${h.generation}`;
    case 'aborted':
      return `aborted:${h.step}`;
    case 'remapped':
      return `remapped:${h.step}`;
    case 'ready':
    case 'restored':
    case 'localStateData':
      return String(h.type);
    default:
      return null;
  }
}

/**
 * One generation of a job: a plan and the members holding its ranks (rank i = members[i]). Rounds
 * are the coordinator's requests answered by every member, matched by key ("step:17"). A round never
 * hangs: it fails when it times out (naming the ranks it waits for), when a member reports a failure,
 * or — as an AgentLostError the training loop recovers from — when a member is lost.
 */
export class Generation {
  readonly layout: Placement[];
  private readonly pending = new Map<string, { replies: Map<number, Message>; done: (m: Message[]) => void; fail: (e: Error) => void }>();
  /** Replies to rounds not yet awaited (an asynchronous pipeline reports steps at its own pace). */
  private readonly early = new Map<string, Map<number, Message>>();
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

  private received(rank: number, m: Message): void {
    if (m.header.type === 'failed') {
      // Only failures of work this generation asked for count: a survivor's report of the step a
      // lost peer broke can arrive after the job has moved on to a new generation.
      if (this.lossGraceSec === null || Number(m.header.generation) !== this.id) return;
      // A survivor's step fails when a peer dies; the coordinator may learn of the death a moment
      // later. Only a failure no loss explains within the grace period ends the job.
      const error = new Error(`Agent ${describeMember(this.members[rank], rank)} failed${m.header.step === null || m.header.step === undefined ? '' : ` at step ${m.header.step}`}: ${String(m.header.message)}`);
      clearTimeout(this.failureTimer);
      this.failureTimer = setTimeout(() => this.breakWith(error), this.lossGraceSec * 1000);
      return;
    }
    // The arrival stamp of an NTP-style ping reply, taken before anything else delays it.
    if (m.header.type === 'clockReply') m.header.receivedMs = clockMs();
    const key = replyKey(m.header);
    if (!key) return;
    const round = this.pending.get(key);
    if (!round) {
      this.early.set(key, (this.early.get(key) ?? new Map<number, Message>()).set(rank, m));
      return;
    }
    round.replies.set(rank, m);
    if (round.replies.size === this.members.length) {
      this.pending.delete(key);
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

  /** Wait for every member's reply to round `key`. */
  expect(key: string): Promise<Message[]> {
    if (this.broken) return Promise.reject(this.broken);
    let timer: NodeJS.Timeout | undefined;
    return new Promise<Message[]>((resolve, reject) => {
      const replies = this.early.get(key) ?? new Map<number, Message>();
      this.early.delete(key);
      if (replies.size === this.members.length) return resolve([...replies.values()]);
      this.pending.set(key, { replies, done: resolve, fail: reject });
      timer = setTimeout(() => {
        const missing = this.members.map((m, rank) => ({ m, rank })).filter(({ rank }) => !replies.has(rank));
        this.pending.delete(key);
        reject(new Error(`Timed out after ${this.timeoutSec} s waiting for ${key} from ${missing.map(({ m, rank }) => describeMember(m, rank)).join(', ')}. Check those agents' logs; a stuck agent can be killed and the job goes on without it.`));
      }, this.timeoutSec * 1000);
    }).finally(() => clearTimeout(timer));
  }

  broadcast(header: Message['header']): void {
    for (const m of this.members) if (!m.lost) m.conn.send(header);
  }

  send(rank: number, header: Message['header'], payload?: Uint8Array): void {
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
