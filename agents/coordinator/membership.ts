import type { Connection } from '../../engine/wire/connection.js';
import type { Message } from '../../engine/wire/frame.js';
import { AgentMessageSchema, type AgentMessage, type AgentReply } from '../../engine/protocol/agentReplies.js';
import type { AgentDevice } from '../../engine/protocol/events.js';
import type { AgentHello } from '../../engine/protocol/handshake.js';
import { parseHeader, unhandled } from '../../engine/protocol/wireHeader.js';


const WATCHDOG_TICK_MS = 250;
/** What a member's generation handles: replies to its requests, and failures. */
export type MemberMessage = Message<AgentReply | Extract<AgentMessage, { type: 'failed' }>>;

/** An agent process that joined the job, whatever rank it holds in the current generation. */
export interface Member {
  /** Join order: stable for the whole job (ranks change from one generation to the next). */
  id: number;
  conn: Connection;
  host: string;
  pid: number;
  peerHost: string;
  peerPort: number;
  backend: string;
  /** The rank the deploy started it for, if it was (AgentHello.slot). */
  slot?: number;
  device?: AgentDevice;
  lastHeard: number;
  /** Why the member is gone (its connection closed, it went silent, it was removed), or null. */
  lost: string | null;
  /** Receives every message of the member except heartbeats and logs. */
  onMessage: (m: MemberMessage) => void;
}

/** "rank 2 on local-2 (pid 4711)" or "agent on local-4 (pid 4713)" outside any generation. */
export function describeMember(m: Member, rank?: number): string {
  return `${rank === undefined ? 'agent' : `rank ${rank}`} on ${m.host} (pid ${m.pid})`;
}

/**
 * Everyone who joined, and who is still there. An agent is lost when its connection drops (a crash,
 * SIGKILL) or when it stops answering — no heartbeat for `heartbeatSec` (SIGSTOP, a hung host). A
 * silent agent is fenced: its connection is closed, so a late wake-up cannot send stale results into
 * the job (the agent exits when it finds its coordinator gone).
 */
export class Membership {
  readonly members: Member[] = [];
  private readonly joinWaiters: Array<() => void> = [];
  private watchdog: NodeJS.Timeout | undefined;
  private readonly lostListeners = new Set<(member: Member, reason: string) => void>();
  onLog: (member: Member, level: string, message: string) => void = () => {};

  add(conn: Connection, hello: AgentHello): Member {
    const member: Member = {
      id: this.members.length,
      conn,
      host: hello.host,
      pid: hello.pid,
      peerHost: hello.peerHost,
      peerPort: hello.peerPort,
      backend: hello.backend,
      ...(hello.slot === undefined ? {} : { slot: hello.slot }),
      ...(hello.device ? { device: hello.device } : {}),
      lastHeard: Date.now(),
      lost: null,
      onMessage: () => {},
    };
    this.members.push(member);
    conn.onMessage = (m) => {
      member.lastHeard = Date.now();
      if (member.lost) return;
      let header: AgentMessage;
      try {
        header = parseHeader(AgentMessageSchema, m.header, describeMember(member));
      } catch (err) {
        // An agent that says what this coordinator cannot read would leave a round waiting: fence it.
        return this.lose(member, `sent a message this coordinator cannot read (${(err as Error).message}) Redeploy the agent if it comes from another Shoal version`);
      }
      switch (header.type) {
        case 'heartbeat':
          return;
        case 'log':
          return this.onLog(member, header.level, header.message);
        case 'failed':
        case 'listening':
        case 'ready':
        case 'stepDone':
        case 'evalDone':
        case 'profileDone':
        case 'clockReply':
        case 'snapshotData':
        case 'restored':
        case 'aborted':
        case 'localStateData':
        case 'remapped':
          return member.onMessage({ header, payload: m.payload });
        default:
          return unhandled(header);
      }
    };
    conn.onClose = (err) => this.lose(member, `disconnected: ${err.message}`);
    this.joinWaiters.splice(0).forEach((wake) => wake());
    return member;
  }

  alive(): Member[] {
    return this.members.filter((m) => !m.lost);
  }

  /** Resolves once at least `count` members are alive (joiners included). */
  async whenAlive(count: number): Promise<void> {
    while (this.alive().length < count) await new Promise<void>((resolve) => this.joinWaiters.push(resolve));
  }

  /** Mark a member gone (once) and close its connection. */
  lose(member: Member, reason: string): void {
    if (member.lost) return;
    member.lost = reason;
    if (!member.conn.closed) member.conn.socket.destroy();
    for (const listener of [...this.lostListeners]) listener(member, reason);
  }

  /** Call `listener` for every member lost from now on; returns the unsubscribe function. */
  whenLost(listener: (member: Member, reason: string) => void): () => void {
    this.lostListeners.add(listener);
    return () => this.lostListeners.delete(listener);
  }

  /**
   * Fence members silent for more than `heartbeatSec`. Liveness is judged on the agents' heartbeats,
   * not on this process's clock: when the watchdog itself ran late (the coordinator was paused by
   * SIGSTOP or starved of CPU), the time it did not run is credited to every member — they may well
   * have spoken, and their words wait, unread, in the socket buffers.
   */
  watch(heartbeatSec: number): void {
    let lastTick = Date.now();
    this.watchdog = setInterval(() => {
      const now = Date.now();
      const paused = now - lastTick - WATCHDOG_TICK_MS;
      lastTick = now;
      if (paused > WATCHDOG_TICK_MS) {
        for (const m of this.alive()) m.lastHeard += paused;
        return; // messages that arrived meanwhile are read before the next tick
      }
      for (const m of this.alive()) {
        const silent = (now - m.lastHeard) / 1000;
        if (silent > heartbeatSec) this.lose(m, `stopped answering: no heartbeat for ${silent.toFixed(1)} s. It was fenced out of the job`);
      }
    }, WATCHDOG_TICK_MS);
    this.watchdog.unref();
  }

  stop(): void {
    clearInterval(this.watchdog);
  }
}
