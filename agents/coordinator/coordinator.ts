import type { Server } from 'node:net';
import { stepsPerEpoch } from '../../engine/data/dataOrder.js';
import { MNIST_TRAIN } from '../../engine/data/mnistSplit.js';
import type { ModelGraph } from '../../engine/model/graph.js';
import { agentsNeeded, parsePlan, type Plan } from '../../engine/plan/plan.js';
import { placements } from '../../engine/plan/placement.js';
import type { Connection } from '../comm/connection.js';
import type { Message } from '../comm/frame.js';
import { listenAuthenticated, type Hello } from '../comm/handshake.js';
import { EventLog } from './eventLog.js';
import { saveParams } from './saveParams.js';
import { readConfigFromStdin } from '../runtime/readConfig.js';

interface CoordinatorConfig {
  secret: string;
  jobId: string;
  plan: unknown;
  model: ModelGraph;
  /** Agents expected to join; ranks beyond the plan's needs stay idle. */
  agents: number;
  steps: number;
  /** Evaluate on the test set every this many steps (and always at the end). */
  evalEverySteps: number;
  /** Where to write the trained parameters at the end (params.bin + params.json); none when absent. */
  outDir?: string;
  /** Seconds a step, evaluation or setup may take before the job fails naming the ranks it waits for. */
  roundTimeoutSec?: number;
}

interface AgentInfo {
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
  const failures = new Promise<never>((_, reject) => {
    active.forEach((agent, rank) => {
      agent.conn.onClose = (err) => reject(new Error(`Agent rank ${rank} on ${agent.host} (pid ${agent.pid}) disconnected: ${err.message}`));
    });
  });
  failures.catch(() => {});

  // Every control reply is tagged with its round so replies are matched to what asked for them.
  const pending = new Map<string, { left: number; replies: Message[]; done: (m: Message[]) => void }>();
  active.forEach((agent, rank) => {
    agent.conn.onMessage = (m) => {
      const h = m.header;
      if (h.type === 'log') return say(h.level as 'info', String(h.message), rank, agent.host);
      if (h.type === 'failed') return say('error', `failed: ${String(h.message)}`, rank, agent.host);
      const key = h.type === 'stepDone' ? `step:${h.step}` : h.type === 'evalDone' ? `eval:${h.evalId}` : h.type === 'ready' || h.type === 'params' ? h.type : null;
      const round = key ? pending.get(key) : undefined;
      if (!round) return;
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
      pending.set(key, { left: active.length, replies: [], done: resolve });
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
    for (const agent of agents) if (!agent.conn.closed) agent.conn.send({ type: 'shutdown' });
    await log.drain();
    setTimeout(() => process.exit(code), 200);
  };

  try {
    await runJob(plan, config, active, log, expect, broadcast);
    await finish(0);
  } catch (err) {
    log.emit({ type: 'status', state: 'failed', message: (err as Error).message, time: now() });
    say('error', (err as Error).message);
    await finish(1);
  }
}

async function runJob(
  plan: Plan,
  config: CoordinatorConfig,
  active: AgentInfo[],
  log: EventLog,
  expect: (key: string) => Promise<Message[]>,
  broadcast: (header: Message['header']) => void,
): Promise<void> {
  const layout = placements(plan);
  const peers = active.map((a, rank) => ({ rank, host: a.peerHost, port: a.peerPort }));
  const ready = expect('ready');
  active.forEach((agent, rank) => {
    agent.conn.send({ type: 'setup', rank, placement: layout[rank], plan, model: config.model, peers });
    log.emit({ type: 'agent', rank, stage: layout[rank].stage, replica: layout[rank].replica, host: agent.host, pid: agent.pid, backend: agent.backend });
  });
  await ready;
  log.emit({ type: 'status', state: 'running', message: `${active.length} agents ready`, time: now() });

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

  for (let step = 0; step < config.steps; step++) {
    const t0 = now();
    const done = expect(`step:${step}`);
    broadcast({ type: 'step', step });
    const replies = await done;
    const loss = replies.reduce((acc, m) => acc + Number(m.header.loss), 0);
    const stepMs = now() - t0;
    if (!Number.isFinite(loss)) throw new Error(`The loss became ${loss} at step ${step}. Lower the learning rate or check the input data.`);
    log.emit({ type: 'step', step, epoch: (step + 1) / perEpoch, loss, stepMs, samplesPerSec: plan.globalBatch / (stepMs / 1000), elapsedMs: now() - started });
    const isLast = step === config.steps - 1;
    if (isLast || (step + 1) % config.evalEverySteps === 0) await evaluate(step + 1);
  }
  const seconds = (now() - started) / 1000;
  if (config.outDir) {
    const replies = expect('params');
    broadcast({ type: 'collect' });
    const saved = saveParams(config.outDir, await replies);
    log.emit({ type: 'log', level: 'info', host: 'coordinator', rank: null, message: `wrote ${saved.index.length} parameter tensors (${saved.bytes} bytes) to ${config.outDir}`, time: now() });
  }
  // The final event is the last line of `shoal train --json`: status first, then the result.
  log.emit({ type: 'status', state: 'finished', time: now() });
  log.emit({
    type: 'final',
    final: true,
    ...last,
    steps: config.steps,
    epochs: config.steps / perEpoch,
    seconds,
    samplesPerSec: (config.steps * plan.globalBatch) / seconds,
    backends: [...new Set(active.map((a) => a.backend))],
  });
}
