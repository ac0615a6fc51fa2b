import type { Server } from 'node:net';
import { basename, resolve } from 'node:path';
import { latestCheckpointIn } from '../../engine/wire/checkpointFolder.js';
import { parsePlan } from '../../engine/plan/plan.js';
import { CoordinatorConfigSchema, LinkSurveyConfigSchema } from '../../engine/protocol/processConfig.js';
import { CoordinatorHelloSchema, type CoordinatorHello } from '../../engine/protocol/handshake.js';
import { ControlRequestSchema, type ControlReply } from '../../engine/protocol/controlWire.js';
import { describeIssues } from '../../engine/protocol/describeIssues.js';
import { unhandled } from '../../engine/protocol/wireHeader.js';
import type { Connection } from '../../engine/wire/connection.js';
import { listenAuthenticated, type Hello } from '../../engine/wire/handshake.js';
import { EventLog } from './eventLog.js';
import { whenOwnerGone } from './ownerWatch.js';
import { whenDeadline } from './deadline.js';
import { describeMember, Membership } from './membership.js';
import { runTraining, type ResizeRequest } from './trainingLoop.js';
import { isLinkSurveyConfig, runLinkSurvey } from './linkSurvey.js';
import { parseConfig, readConfigFromStdin } from '../runtime/readConfig.js';
import { rememberedPort, rememberPort, restartCount, resumePointAfterRestart } from './restart.js';
import { teamAfterRestart } from '../../engine/plan/restartPolicy.js';
import { HEARTBEAT_TIMEOUT_SEC } from '../../engine/plan/runtimeConstants.js';

const now = () => Date.now();

/**
 * The coordinator of one job: rendezvous, rank assignment, the step loop (trainingLoop.ts), and the
 * event stream every studio attaches to. It binds to 127.0.0.1 unless told otherwise; remote studios
 * reach it through SSH. Three kinds of authenticated peers connect: agents, studios (events), and
 * controllers (resize requests).
 */
export async function runCoordinator(): Promise<void> {
  const raw = await readConfigFromStdin('coordinator');
  // `shoal cluster test` starts a coordinator that only measures the links between hosts (linkSurvey.ts).
  if (isLinkSurveyConfig(raw)) return runLinkSurvey(parseConfig(LinkSurveyConfigSchema, raw, 'coordinator'));
  const config = parseConfig(CoordinatorConfigSchema, raw, 'coordinator');
  const plan = parsePlan(config.plan);
  const skipped: string[] = [];
  config.resumeFrom = resumePointAfterRestart(config.checkpointDir, config.resumeFrom, (m) => skipped.push(m));
  // A restarted coordinator has the first one's profile already on disk.
  if (restartCount() > 0) config.profile = false;
  const log = new EventLog(config.eventLogPath, { continues: restartCount() > 0 });
  // Restarted by its supervisor: the agents the history says the job last had.
  const team = restartCount() > 0 ? teamAfterRestart(plan, config.model, config.agents, log.replayed) : null;
  if (team) config.agents = team.agents;
  const startPlan = team?.plan;
  const say = (level: 'info' | 'warn' | 'error', message: string, rank: number | null = null, host = 'coordinator') => {
    log.emit({ type: 'log', level, host, rank, message, time: now() });
    process.stderr.write(`[${host}${rank === null ? '' : ` rank ${rank}`}] ${message}\n`);
  };
  for (const message of skipped) say('warn', message);
  if (restartCount() > 0) say('warn', `The coordinator was restarted after a crash (restart ${restartCount()}); it continues from ${config.resumeFrom ?? 'the first step (no checkpoint yet)'} once ${config.agents} agents have rejoined.`);
  log.emit({ type: 'status', state: 'starting', message: `waiting for ${config.agents} agents`, time: now() });

  const membership = new Membership();
  membership.onLog = (member, level, message) => say(level as 'info', message, null, member.host);
  const resizes: ResizeRequest[] = [];
  const stop = { requested: false };
  whenOwnerGone((owner) => {
    if (stop.requested) return;
    stop.requested = true;
    say('warn', `The job's owner (pid ${owner}: shoal train or the studio) is gone: the job stops with a checkpoint at the next step boundary, as on Ctrl-C; shoal resume continues it from there.`);
  });
  whenDeadline(config.stopBy, () => {
    if (stop.requested) return;
    stop.requested = true;
    say('warn', `The job's allocation ends soon (its time limit): the job stops with a checkpoint at the next step boundary; shoal resume continues it from there.`);
  });
  const server: Server = await listenAuthenticated(
    config.listenHost ?? '127.0.0.1',
    rememberedPort(),
    config.secret,
    (conn: Connection, raw: Hello) => {
      const hello = CoordinatorHelloSchema.safeParse(raw);
      if (!hello.success) {
        say('warn', `refused a connection from ${conn.peer}: its hello is not one this coordinator understands (${describeIssues(hello.error.issues)}).`);
        return conn.close();
      }
      accept(conn, hello.data);
    },
    (peer, reason) => say('warn', `refused a connection from ${peer}: ${reason}`),
  );
  /** Studios follow the events, controllers ask for resizes, agents join. */
  function accept(conn: Connection, hello: CoordinatorHello): void {
    switch (hello.role) {
      case 'studio':
        return log.attach(conn, hello.since);
      case 'control':
        return acceptControl(conn, resizes, stop, say, () => membership.members.length);
      case 'agent': {
        const member = membership.add(conn, hello);
        if (membership.members.length > config.agents) say('info', `${describeMember(member)} joined; the next re-plan (the resize that added it, or a lost agent) gives it a rank.`);
        return;
      }
      default:
        return unhandled(hello);
    }
  }
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
  membership.watch(config.heartbeatTimeoutSec ?? HEARTBEAT_TIMEOUT_SEC);

  const finish = async (code: number) => {
    membership.stop();
    for (const m of membership.alive()) m.conn.send({ type: 'shutdown' });
    await log.drain();
    setTimeout(() => process.exit(code), 200);
  };

  try {
    await runTraining({ config, plan, startPlan, membership, log, resizes, stop });
    await finish(0);
  } catch (err) {
    const message = `${(err as Error).message}${wayBack(config.checkpointDir, config.checkpointEverySteps)}`;
    log.emit({ type: 'status', state: 'failed', message, time: now() });
    say('error', message);
    await finish(1);
  }
}

/** A controller's requests: `resize` is queued for the next step boundary and acknowledged. */
let requests = 0;

function acceptControl(conn: Connection, resizes: ResizeRequest[], stop: { requested: boolean }, say: (level: 'info' | 'warn' | 'error', message: string) => void, joined: () => number): void {
  const reply = (answer: ControlReply) => conn.send(answer);
  conn.onMessage = (m) => {
    const request = ControlRequestSchema.safeParse(m.header);
    if (!request.success) {
      if (m.header.type !== 'resize') return reply({ type: 'error', message: `Unknown control request "${String(m.header.type)}".` });
      return reply({ type: 'error', message: `A resize adds a whole number of agents (add ≥ 0) and removes ranks (non-negative integers): ${describeIssues(request.error.issues)}.` });
    }
    if (request.data.type === 'checkpointAndStop') {
      stop.requested = true;
      say('info', 'Stop requested: a checkpoint is saved at the next step boundary, then the job stops.');
      return reply({ type: 'accepted', requestId: `stop-${restartCount()}.${++requests}` });
    }
    const { add, remove } = request.data;
    // Unique across restarts too: the replayed history holds the earlier coordinators' ids, and a
    // controller waits for the membership event that carries its own.
    const id = `resize-${restartCount()}.${++requests}`;
    // Agents that join from now on are this request's (they are started once it is accepted).
    resizes.push({ add, remove, id, joinedBefore: joined() });
    say('info', `Resize requested: ${add ? `add ${add} agent(s)` : ''}${add && remove.length ? ', ' : ''}${remove.length ? `remove rank(s) ${remove.join(', ')}` : ''}; applied at the next step boundary.`);
    reply({ type: 'accepted', requestId: id });
  };
}

/** What a failed job's message ends with: the checkpoint it can continue from once the cause is fixed. */
function wayBack(checkpointDir: string | undefined, checkpointEvery: number | undefined): string {
  const newest = checkpointDir ? latestCheckpointIn(checkpointDir) : null;
  if (!newest && checkpointEvery) return ' None of its checkpoints was written before the failure, so there is none to resume from.';
  if (!newest) return ' No checkpoint was written before the failure (--checkpoint-every N saves them as the job goes).';
  return ` Its newest checkpoint, ${basename(newest)}, is kept: fix the cause, then \`shoal resume ${resolve(checkpointDir!, '..')}\` continues from it.`;
}
