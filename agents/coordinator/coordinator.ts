import type { Server } from 'node:net';
import type { ModelGraph } from '../../engine/model/graph.js';
import { parsePlan } from '../../engine/plan/plan.js';
import type { Connection } from '../../engine/wire/connection.js';
import { listenAuthenticated, type Hello } from '../../engine/wire/handshake.js';
import { EventLog } from './eventLog.js';
import { describeMember, Membership } from './membership.js';
import { runTraining, type ResizeRequest } from './trainingLoop.js';
import { isLinkSurveyConfig, runLinkSurvey } from './linkSurvey.js';
import { readConfigFromStdin } from '../runtime/readConfig.js';
import { rememberedPort, rememberPort, restartCount, resumePointAfterRestart, teamAfterRestart } from './restart.js';
import type { SyntheticStageMs } from '../exec/syntheticStage.js';
import type { TrainingSetup } from '../../engine/protocol/trainingSetup.js';

export interface CoordinatorConfig {
  secret: string;
  jobId: string;
  plan: unknown;
  /**
   * The first generation's plan when it is not `plan` (which later resizes keep re-planning from): a
   * job restarted after a crash continues with the agents it had, re-planned for them.
   */
  startPlan?: unknown;
  model: ModelGraph;
  /** What the agents train on and minimise; absent: the built-in models' MNIST digits and cross-entropy. */
  training?: TrainingSetup;
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
  /** Benchmarks only: every stage takes this long per micro-batch instead of computing, asleep or busy (agents/exec/syntheticStage.ts). */
  syntheticStageMs?: SyntheticStageMs;
  /** Re-balance virtual nodes between replicas by their measured speed (default true). */
  rebalance?: boolean;
  /** Overlap gradient all-reduce with the last backward pass (default true). */
  overlapGradients?: boolean;
  /** Profile layers and links at the start (default true); written here as JSON when given (profile.json). */
  profile?: boolean;
  profilePath?: string;
  /** Batch sizes the layers are timed at (default: around the plan's micro-batch). */
  profileBatches?: number[];
  /** Timed repetitions per layer and batch size after a warm-up (default 3); the median is kept. */
  profileRepeats?: number;
  /** Calibration-grade profile: every agent times the whole model, alone and all at once, and all-reduces at several sizes. */
  profileFull?: boolean;
  /** Record and emit the measured timeline of every this many synchronous steps (default 10; 0 = never). */
  timelineEverySteps?: number;
  /**
   * Address to listen on (default 127.0.0.1). A job with agents on other hosts passes the head host's
   * cluster address so they can join; every connection is still HMAC-authenticated.
   */
  listenHost?: string;
  /** Append every event to this file (JSON lines), so the history survives the coordinator (shoal attach). */
  eventLogPath?: string;
}

const now = () => Date.now();

/**
 * The coordinator of one job: rendezvous, rank assignment, the step loop (trainingLoop.ts), and the
 * event stream every studio attaches to. It binds to 127.0.0.1 unless told otherwise; remote studios
 * reach it through SSH. Three kinds of authenticated peers connect: agents, studios (events), and
 * controllers (resize requests).
 */
export async function runCoordinator(): Promise<void> {
  const config = await readConfigFromStdin<CoordinatorConfig>('coordinator');
  // `shoal cluster test` starts a coordinator that only measures the links between hosts (linkSurvey.ts).
  if (isLinkSurveyConfig(config)) return runLinkSurvey(config);
  const plan = parsePlan(config.plan);
  config.resumeFrom = resumePointAfterRestart(config.checkpointDir, config.resumeFrom);
  const log = new EventLog(config.eventLogPath, { continues: restartCount() > 0 });
  // Restarted by its supervisor (a deployed job): the agents the history says the job last had.
  const team = restartCount() > 0 ? teamAfterRestart(plan, config.model, config.agents, log.events) : null;
  if (team) config.agents = team.agents;
  const startPlan = config.startPlan ? parsePlan(config.startPlan) : team?.plan;
  const say = (level: 'info' | 'warn' | 'error', message: string, rank: number | null = null, host = 'coordinator') => {
    log.emit({ type: 'log', level, host, rank, message, time: now() });
    process.stderr.write(`[${host}${rank === null ? '' : ` rank ${rank}`}] ${message}\n`);
  };
  if (restartCount() > 0) say('warn', `The coordinator was restarted after a crash (restart ${restartCount()}); it continues from ${config.resumeFrom ?? 'the first step (no checkpoint yet)'} once ${config.agents} agents have rejoined.`);
  log.emit({ type: 'status', state: 'starting', message: `waiting for ${config.agents} agents`, time: now() });

  const membership = new Membership();
  membership.onLog = (member, level, message) => say(level as 'info', message, null, member.host);
  const resizes: ResizeRequest[] = [];
  const server: Server = await listenAuthenticated(
    config.listenHost ?? '127.0.0.1',
    rememberedPort(),
    config.secret,
    (conn: Connection, hello: Hello) => {
      if (hello.role === 'studio') return log.attach(conn, Number(hello.since ?? 0));
      if (hello.role === 'control') return acceptControl(conn, resizes, say);
      const member = membership.add(conn, hello);
      if (membership.members.length > config.agents) say('info', `${describeMember(member)} joined; it takes part from the next resize.`);
    },
    (peer, reason) => say('warn', `refused a connection from ${peer}: ${reason}`),
  );
  const address = server.address();
  if (!address || typeof address === 'string') throw new Error('The coordinator has no TCP address.');
  process.stdout.write(JSON.stringify({ listening: address.port }) + '\n');
  rememberPort(address.port);

  const timeoutSec = config.roundTimeoutSec ?? 300;
  const rendezvous = setTimeout(() => {
    const joined = membership.alive();
    const message = `Only ${joined.length} of ${config.agents} agents joined within ${timeoutSec} s (${joined.map((a) => a.host).join(', ') || 'none'}). Check the missing agents' logs.`;
    log.emit({ type: 'status', state: 'failed', message, time: now() });
    say('error', message);
    setTimeout(() => process.exit(1), 500);
  }, timeoutSec * 1000);
  await membership.whenAlive(config.agents);
  clearTimeout(rendezvous);
  membership.watch(config.heartbeatTimeoutSec ?? 5);

  const finish = async (code: number) => {
    membership.stop();
    for (const m of membership.alive()) m.conn.send({ type: 'shutdown' });
    await log.drain();
    setTimeout(() => process.exit(code), 200);
  };

  try {
    await runTraining({ config, plan, startPlan, membership, log, resizes });
    await finish(0);
  } catch (err) {
    log.emit({ type: 'status', state: 'failed', message: (err as Error).message, time: now() });
    say('error', (err as Error).message);
    await finish(1);
  }
}

/** A controller's requests: `resize` is queued for the next step boundary and acknowledged. */
let requests = 0;

function acceptControl(conn: Connection, resizes: ResizeRequest[], say: (level: 'info' | 'warn' | 'error', message: string) => void): void {
  conn.onMessage = (m) => {
    if (m.header.type !== 'resize') return conn.send({ type: 'error', message: `Unknown control request "${String(m.header.type)}".` });
    const add = Number(m.header.add ?? 0);
    const remove = Array.isArray(m.header.remove) ? m.header.remove.map(Number) : [];
    if (!Number.isInteger(add) || add < 0 || remove.some((r) => !Number.isInteger(r) || r < 0)) {
      return conn.send({ type: 'error', message: 'A resize adds a whole number of agents (add ≥ 0) and removes ranks (non-negative integers).' });
    }
    // Unique across restarts too: the replayed history holds the earlier coordinators' ids, and a
    // controller waits for the membership event that carries its own.
    const id = `resize-${restartCount()}.${++requests}`;
    resizes.push({ add, remove, id });
    say('info', `Resize requested: ${add ? `add ${add} agent(s)` : ''}${add && remove.length ? ', ' : ''}${remove.length ? `remove rank(s) ${remove.join(', ')}` : ''}; applied at the next step boundary.`);
    conn.send({ type: 'accepted', requestId: id });
  };
}
