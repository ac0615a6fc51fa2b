import { hostname } from 'node:os';
import { agentDevice } from '../backend/agentDevice.js';
import { selectBackend } from '../backend/selectBackend.js';
import type { Connection } from '../../engine/wire/connection.js';
import { bytesToFloats, floatsToBytes } from '../../engine/wire/frame.js';
import { AgentRequestSchema, nthRequestId, type AgentRequest } from '../../engine/protocol/agentRequests.js';
import type { AgentMessage } from '../../engine/protocol/agentReplies.js';
import type { AgentHello } from '../../engine/protocol/handshake.js';
import { AgentConfigSchema } from '../../engine/protocol/processConfig.js';
import { parseHeader, unhandled } from '../../engine/protocol/wireHeader.js';
import { PeerMesh } from '../comm/peerMesh.js';
import { createAsyncState, runAsyncPipeline, type AsyncState, type AsyncStepReport } from '../schedule/asyncPipeline.js';
import { runPipelineStep } from '../schedule/pipelineStep.js';
import { runPipelineEval } from './evaluate.js';
import { parseConfig, readConfigFromStdin } from './readConfig.js';
import { joinCoordinator, REJOIN_EXIT_CODE } from './joinCoordinator.js';
import { profileAgent } from './profileLayers.js';
import { clockMs, timeline } from './timelineRecorder.js';
import { restoreStage, snapshotStage, type StageSnapshot } from './stageState.js';
import { fetchState, serveState } from './stateShare.js';
import type { StageContext } from './stageContext.js';
import { buildStage } from './buildStage.js';
import { parsePlan } from '../../engine/plan/plan.js';
import { remapVirtualNodes } from '../../engine/plan/elastic.js';
import { disposeStage, localState } from './localState.js';
import { StepUndo } from './stepUndo.js';
import { beginMemoryStep, memoryStepDone, watchTensorMemory } from './memoryWatermark.js';
import type { ShardedGraphStage } from '../exec/tensorParallel/shardedGraphStage.js';
import { HEARTBEAT_INTERVAL_MS } from '../../engine/plan/runtimeConstants.js';

/**
 * An agent: one process per device. It joins the coordinator, receives its rank and its part of the
 * plan, links up with the peers it exchanges tensors with, then executes steps and evaluations on
 * command, reporting results back.
 */
export async function runAgent(): Promise<void> {
  const config = parseConfig(AgentConfigSchema, await readConfigFromStdin('agent'), 'agent');
  const host = config.hostLabel ?? hostname();
  let rank: number | null = null;
  const prefix = () => `[${host} rank ${rank ?? '?'}]`;
  let coordinator: Connection | null = null;
  /** Everything this agent tells the coordinator goes through here, typed by the wire's union. */
  const tell = (message: AgentMessage, payload?: Uint8Array): void => void coordinator!.send(message, payload);
  const log = (level: 'info' | 'warn' | 'error', message: string) => {
    // Once joined, logs travel to the coordinator (which adds host and rank); before that, stderr.
    if (coordinator && !coordinator.closed) tell({ type: 'log', level, message });
    else process.stderr.write(`${prefix()} ${message}\n`);
  };

  watchTensorMemory();
  const backend = await selectBackend({ log: (m) => log('info', m) });
  // One mesh per generation of the job (a resize or a lost agent starts a new one, with new ranks).
  /** This stage's snapshot, kept while a resize hands it to the next generation (stateShare.ts). */
  let held: StageSnapshot | null = null;
  const newMesh = () => {
    const m = new PeerMesh(config.secret, (msg) => log('warn', msg));
    m.onStateRequest = (conn, names) => serveState(conn, held, names);
    return m;
  };
  let mesh = newMesh();
  const peerPort = await mesh.listen(config.bindHost);
  coordinator = await joinCoordinator(config.coordinator, config.secret, {
    role: 'agent',
    host,
    pid: process.pid,
    peerHost: config.bindHost,
    peerPort,
    backend: backend.name,
    ...(config.slot === undefined ? {} : { slot: config.slot }),
    device: agentDevice(backend, config.gpu),
  } satisfies AgentHello);
  log('info', `joined the coordinator; backend ${backend.name} (${backend.detail})`);

  let ctx: StageContext | null = null;
  let asyncState: AsyncState | null = null;
  const undo = new StepUndo();
  /** The step the coordinator discarded while it ran here: its failure is expected, not fatal. */
  let aborting: number | null = null;
  /** The job generation this agent's rank belongs to (its failures are reported with it). */
  let generation = 0;
  /** The context of a request that needs this agent's stage. */
  const stage = (what: string): StageContext => {
    if (!ctx) throw new Error(`${what} arrived before setup.`);
    return ctx;
  };
  const handle = async (request: AgentRequest, payload: Uint8Array | undefined): Promise<void> => {
    switch (request.type) {
      case 'listen': {
        // A new generation: forget the stage and the links of the old one, listen for the new peers.
        undo.forget();
        if (ctx) disposeStage(ctx);
        ctx = null;
        asyncState = null;
        mesh.close();
        mesh = newMesh();
        return tell({ type: 'listening', requestId: request.requestId, rank: request.rank, peerPort: await mesh.listen(config.bindHost) });
      }
      case 'abort': {
        const undone = ctx ? undo.undo(ctx, request.step) : false;
        aborting = null;
        return tell({ type: 'aborted', requestId: request.requestId, rank, step: request.step, undone });
      }
      case 'remap': {
        // The same ranks and links, another split of the virtual nodes (a re-balance by speed).
        const c = stage('A re-mapping');
        c.plan = remapVirtualNodes(c.plan, parsePlan(request.plan));
        return tell({ type: 'remapped', requestId: request.requestId, rank: c.me.rank });
      }
      case 'localState': {
        const c = stage('A state request');
        const state = localState(c);
        const { me } = c;
        return tell({ type: 'localStateData', requestId: request.requestId, rank: me.rank, stage: me.stage, replica: me.replica, shard: me.shard, tensors: state.tensors, optimizerStep: state.optimizerStep, complete: state.complete }, floatsToBytes(state.values));
      }
      case 'setup': {
        rank = request.rank;
        generation = request.generation;
        ctx = await buildStage(request, mesh);
        ctx.slowdown = Math.max(1, config.slowdown ?? 1);
        const { me, plan } = ctx;
        const sharded = ctx.tensorGroup ? ` shard ${me.shard}; runs ${(ctx.module as ShardedGraphStage).describe()}` : '';
        log('info', `stage ${me.stage} replica ${me.replica}: layers ${plan.stages[me.stage].layers.join(', ')}${sharded}`);
        return tell({ type: 'ready', requestId: request.requestId, rank: me.rank });
      }
      case 'step': {
        const c = stage('A step');
        undo.capture(c, request.step);
        timeline.begin({ stage: c.me.stage, rank: c.me.rank, replica: c.me.replica }, request.timeline);
        beginMemoryStep();
        const result = await runPipelineStep(c, request.step);
        memoryStepDone(c.me, request.step);
        const recorded = timeline.take();
        return tell({ type: 'stepDone', requestId: request.requestId, rank: c.me.rank, step: request.step, ...result, timeline: recorded.events, memory: recorded.memory });
      }
      case 'profile': {
        const c = stage('A profiling request');
        return tell({ type: 'profileDone', requestId: request.requestId, rank: c.me.rank, ...(await profileAgent(c, request)) });
      }
      case 'asyncRun': {
        const c = stage('An asynchronous run');
        asyncState ??= createAsyncState(c);
        // Step s answers the request id the coordinator set aside for it (agentRequests.ts).
        const { firstRequestId, fromStep } = request;
        const report = (r: AsyncStepReport) =>
          tell({ type: 'stepDone', requestId: nthRequestId(firstRequestId, r.step - fromStep), rank: c.me.rank, step: r.step, loss: r.loss, computeMs: r.computeMs, allReduceMs: r.allReduceMs, stage: c.me.stage, stats: r.stats, timeline: r.timeline });
        return runAsyncPipeline(c, asyncState, fromStep, request.toStep, report, request.timelineEverySteps);
      }
      case 'eval': {
        const c = stage('An evaluation');
        const result = await runPipelineEval(c, request.evalId);
        return tell({ type: 'evalDone', requestId: request.requestId, rank: c.me.rank, ...result });
      }
      case 'snapshot': {
        const c = stage('A checkpoint request');
        // Every agent takes part (sharded state is gathered); the first replica's first shard speaks.
        const snap = await snapshotStage(c);
        const reply = { type: 'snapshotData', requestId: request.requestId, rank: c.me.rank, stage: c.me.stage, tensors: snap?.tensors ?? null, optimizerStep: snap?.optimizerStep ?? null } as const;
        if (!request.keep) return tell(reply, snap ? floatsToBytes(snap.values) : undefined);
        // A resize: keep the state here for the next generation to fetch; only its names travel.
        held = snap;
        return tell({ ...reply, held: snap !== null });
      }
      case 'fetchState': {
        const c = stage('A state hand-over');
        const fetched = await fetchState(config.secret, request.sources);
        restoreStage(c, fetched.tensors, fetched.body, request.optimizerStep);
        log('info', `restored ${fetched.tensors.length} tensors (${(fetched.bytes / 2 ** 20).toFixed(2)} MiB) from peer(s) ${request.sources.map((s) => `${s.host}:${s.port}`).join(', ')}`);
        return tell({ type: 'restored', requestId: request.requestId, rank: c.me.rank, fromPeers: request.sources.length, bytes: fetched.bytes });
      }
      case 'dropState':
        held = null;
        return;
      case 'restore': {
        const c = stage('A restore');
        restoreStage(c, request.tensors, bytesToFloats(payload), request.optimizerStep);
        return tell({ type: 'restored', requestId: request.requestId, rank: c.me.rank });
      }
      case 'clock':
        // Answered at once when it arrives (below), never queued.
        return;
      case 'shutdown':
        mesh.close();
        coordinator!.close();
        return process.exit(0);
      default:
        return unhandled(request);
    }
  };

  // Messages are handled strictly one after another: a step must finish before the next begins.
  let queue = Promise.resolve();
  const failed = (step: number | null, message: string) => tell({ type: 'failed', rank, generation, step, message });
  coordinator.onMessage = (message) => {
    let request: AgentRequest;
    try {
      request = parseHeader(AgentRequestSchema, message.header, 'the coordinator');
    } catch (err) {
      // A coordinator of another version (the handshake should have said so) or a bug: reported, not run.
      log('error', (err as Error).message);
      return void failed(null, (err as Error).message);
    }
    // Clock pings are answered at once, outside the queue: the reply's stamp is what the offset needs.
    if (request.type === 'clock') {
      if (rank === null) return void failed(null, 'A clock ping arrived before setup.');
      return void tell({ type: 'clockReply', requestId: request.requestId, rank, agentMs: clockMs() });
    }
    // A discarded step may be waiting on a lost peer: closing the links ends its receives at once.
    if (request.type === 'abort') {
      aborting = request.step;
      mesh.abort();
    }
    const step = request.type === 'step' ? request.step : null;
    queue = queue.then(() => handle(request, message.payload)).catch((err: Error) => {
      if (step !== null && step === aborting) {
        log('info', `step ${aborting} discarded: ${err.message}`);
        return;
      }
      // Reported, not fatal here: when a peer was lost the coordinator discards the step and carries
      // on with the survivors; otherwise it ends the job and shuts every agent down.
      log('error', `failed: ${err.message}`);
      failed(step, err.message);
    });
  };
  // Heartbeats let the coordinator tell a slow agent from a stopped one. Timers fire between the
  // stage's compute calls, which take milliseconds, so a busy agent still beats.
  setInterval(() => {
    if (!coordinator!.closed) tell({ type: 'heartbeat' });
  }, HEARTBEAT_INTERVAL_MS).unref();
  coordinator.onClose = () => {
    // Under a deployed job's supervisor, exit code 75 asks to be started again: the coordinator may
    // be restarting after a crash (agents/coordinator/restart.ts), and the new agent rejoins it.
    const rejoin = process.env.SHOAL_SUPERVISED === '1';
    process.stderr.write(`${prefix()} lost the coordinator; ${rejoin ? 'exiting to rejoin it if it restarts' : 'exiting'}.\n`);
    process.exit(rejoin ? REJOIN_EXIT_CODE : 1);
  };
}
