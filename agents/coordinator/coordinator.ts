import type { Server } from 'node:net';
import type { ModelGraph } from '../../engine/model/graph.js';
import { agentsNeeded, parsePlan } from '../../engine/plan/plan.js';
import type { Connection } from '../comm/connection.js';
import type { Message } from '../comm/frame.js';
import { listenAuthenticated, type Hello } from '../comm/handshake.js';
import { EventLog } from './eventLog.js';
import { runTraining } from './trainingLoop.js';
import { readConfigFromStdin } from '../runtime/readConfig.js';
import { clockMs } from '../runtime/timelineRecorder.js';

export interface CoordinatorConfig {
  secret: string;
  jobId: string;
  plan: unknown;
  model: ModelGraph;
  /** Agents expected to join; ranks beyond the plan's needs stay idle. */
  agents: number;
  steps: number;
  /** Evaluate on the test set every this many steps (and always at the end). */
  evalEverySteps: number;
  /** Folder for checkpoints (step-NNNNNN.ckpt); the last step is always saved there. None when absent. */
  checkpointDir?: string;
  /** Also save a checkpoint every this many steps. */
  checkpointEverySteps?: number;
  /** A checkpoint to resume from: parameters, optimizer state and the step to continue at. */
  resumeFrom?: string;
  /** Seconds without a heartbeat after which an agent counts as lost (default 5). */
  heartbeatTimeoutSec?: number;
  /** Seconds a step, evaluation or setup may take before the job fails naming the ranks it waits for. */
  roundTimeoutSec?: number;
  /** Benchmarks only: every stage sleeps this long per micro-batch instead of computing (agents/exec/syntheticStage.ts). */
  syntheticStageMs?: { forward: number; backward: number };
  /** Overlap gradient all-reduce with the last backward pass (default true). */
  overlapGradients?: boolean;
  /** Profile layers and links at the start (default true); written here as JSON when given (profile.json). */
  profile?: boolean;
  profilePath?: string;
  /** Batch sizes the layers are timed at (default: around the plan's micro-batch). */
  profileBatches?: number[];
  /** Timed repetitions per layer and batch size after a warm-up (default 3); the median is kept. */
  profileRepeats?: number;
  /** Record and emit the measured timeline of every this many synchronous steps (default 10; 0 = never). */
  timelineEverySteps?: number;
}

export interface AgentInfo {
  conn: Connection;
  host: string;
  pid: number;
  peerHost: string;
  peerPort: number;
  backend: string;
}

const now = () => Date.now();

/**
 * The coordinator of one job: rendezvous, rank assignment, the step loop, evaluation, and the event
 * stream every studio attaches to. It binds to 127.0.0.1 only; remote studios reach it through SSH.
 */
export async function runCoordinator(): Promise<void> {
  const config = await readConfigFromStdin<CoordinatorConfig>('coordinator');
  const plan = parsePlan(config.plan);
  const log = new EventLog();
  const say = (level: 'info' | 'warn' | 'error', message: string, rank: number | null = null, host = 'coordinator') => {
    log.emit({ type: 'log', level, host, rank, message, time: now() });
    process.stderr.write(`[${host}${rank === null ? '' : ` rank ${rank}`}] ${message}\n`);
  };
  log.emit({ type: 'status', state: 'starting', message: `waiting for ${config.agents} agents`, time: now() });

  const agents: AgentInfo[] = [];
  let allJoined!: () => void;
  const joined = new Promise<void>((resolve) => (allJoined = resolve));
  const server: Server = await listenAuthenticated(
    '127.0.0.1',
    0,
    config.secret,
    (conn: Connection, hello: Hello) => {
      if (hello.role === 'studio') {
        log.attach(conn, Number(hello.since ?? 0));
        return;
      }
      const info: AgentInfo = {
        conn,
        host: String(hello.host),
        pid: Number(hello.pid),
        peerHost: String(hello.peerHost),
        peerPort: Number(hello.peerPort),
        backend: String(hello.backend),
      };
      agents.push(info);
      if (agents.length === config.agents) allJoined();
    },
    (peer, reason) => say('warn', `refused a connection from ${peer}: ${reason}`),
  );
  const address = server.address();
  if (!address || typeof address === 'string') throw new Error('The coordinator has no TCP address.');
  process.stdout.write(JSON.stringify({ listening: address.port }) + '\n');

  const timeoutSec = config.roundTimeoutSec ?? 300;
  const rendezvous = setTimeout(() => {
    const message = `Only ${agents.length} of ${config.agents} agents joined within ${timeoutSec} s (${agents.map((a) => a.host).join(', ') || 'none'}). Check the missing agents' logs.`;
    log.emit({ type: 'status', state: 'failed', message, time: now() });
    say('error', message);
    setTimeout(() => process.exit(1), 500);
  }, timeoutSec * 1000);
  await joined;
  clearTimeout(rendezvous);
  const active = agents.slice(0, agentsNeeded(plan));
  // An agent fails the job when its connection drops (a crash, SIGKILL) or when it stops answering
  // (SIGSTOP, a hung host): no heartbeat for heartbeatTimeoutSec. A silent agent is fenced — its
  // connection is closed — so that a late wake-up cannot send stale results into the job.
  const heartbeatSec = config.heartbeatTimeoutSec ?? 5;
  const lastHeard = active.map(() => now());
  let watchdog: NodeJS.Timeout | undefined;
  const failures = new Promise<never>((_, reject) => {
    active.forEach((agent, rank) => {
      agent.conn.onClose = (err) => reject(new Error(`Agent rank ${rank} on ${agent.host} (pid ${agent.pid}) disconnected: ${err.message}`));
    });
    watchdog = setInterval(() => {
      active.forEach((agent, rank) => {
        const silent = (now() - lastHeard[rank]) / 1000;
        if (silent <= heartbeatSec || agent.conn.closed) return;
        reject(new Error(`Agent rank ${rank} on ${agent.host} (pid ${agent.pid}) stopped answering: no heartbeat for ${silent.toFixed(1)} s. It was fenced out of the job; check that host.`));
        agent.conn.socket.destroy();
      });
    }, 500);
    watchdog.unref();
  });
  failures.catch(() => {});

  // Every control reply is tagged with its round so replies are matched to what asked for them.
  const pending = new Map<string, { left: number; replies: Message[]; done: (m: Message[]) => void }>();
  // Replies to rounds not yet awaited (an asynchronous pipeline reports steps at its own pace).
  const early = new Map<string, Message[]>();
  active.forEach((agent, rank) => {
    agent.conn.onMessage = (m) => {
      lastHeard[rank] = now();
      const h = m.header;
      if (h.type === 'heartbeat') return;
      if (h.type === 'log') return say(h.level as 'info', String(h.message), rank, agent.host);
      if (h.type === 'failed') return say('error', `failed: ${String(h.message)}`, rank, agent.host);
      if (h.type === 'clockReply') h.receivedMs = clockMs(); // the arrival stamp of an NTP-style ping
      const key =
        h.type === 'clockReply' ? `clock:${h.seq}` : h.type === 'profileDone' ? 'profile' : h.type === 'stepDone' ? `step:${h.step}` : h.type === 'evalDone' ? `eval:${h.evalId}` : h.type === 'snapshotData' ? `snapshot:${h.snapshotId}` : h.type === 'ready' || h.type === 'restored' ? h.type : null;
      if (!key) return;
      const round = pending.get(key);
      if (!round) {
        early.set(key, [...(early.get(key) ?? []), m]);
        return;
      }
      round.replies.push(m);
      if (--round.left === 0) {
        pending.delete(key!);
        round.done(round.replies);
      }
    };
  });
  // No silent hangs: a round that does not complete in time names the ranks it still waits for.
  const expect = (key: string): Promise<Message[]> => {
    let timer: NodeJS.Timeout | undefined;
    const replies = new Promise<Message[]>((resolve, reject) => {
      const arrived = early.get(key) ?? [];
      early.delete(key);
      if (arrived.length === active.length) return resolve(arrived);
      pending.set(key, { left: active.length - arrived.length, replies: arrived, done: resolve });
      timer = setTimeout(() => {
        const round = pending.get(key);
        const answered = new Set(round?.replies.map((m) => Number(m.header.rank)));
        const missing = active.map((a, rank) => ({ a, rank })).filter(({ rank }) => !answered.has(rank));
        reject(new Error(`Timed out after ${timeoutSec} s waiting for ${key} from ${missing.map(({ a, rank }) => `rank ${rank} on ${a.host} (pid ${a.pid})`).join(', ')}. Check those agents' logs; a stuck agent can be killed and the job restarted.`));
      }, timeoutSec * 1000);
    });
    return Promise.race([replies, failures]).finally(() => clearTimeout(timer));
  };
  const broadcast = (header: Message['header']) => {
    for (const agent of active) agent.conn.send(header);
  };

  const finish = async (code: number) => {
    clearInterval(watchdog);
    for (const agent of agents) if (!agent.conn.closed) agent.conn.send({ type: 'shutdown' });
    await log.drain();
    setTimeout(() => process.exit(code), 200);
  };

  try {
    await runTraining({ plan, config, active, log, expect, broadcast });
    await finish(0);
  } catch (err) {
    log.emit({ type: 'status', state: 'failed', message: (err as Error).message, time: now() });
    say('error', (err as Error).message);
    await finish(1);
  }
}
