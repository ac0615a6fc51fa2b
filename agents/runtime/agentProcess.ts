import { hostname } from 'node:os';
import { selectBackend } from '../backend/selectBackend.js';
import type { Connection } from '../../engine/wire/connection.js';
import { bytesToFloats, floatsToBytes, type Message } from '../../engine/wire/frame.js';
import type { CheckpointTensor } from '../../engine/wire/checkpointFile.js';
import { PeerMesh } from '../comm/peerMesh.js';
import { createAsyncState, runAsyncPipeline, type AsyncState } from '../schedule/asyncPipeline.js';
import { runPipelineStep } from '../schedule/pipelineStep.js';
import { runPipelineEval } from './evaluate.js';
import { readConfigFromStdin } from './readConfig.js';
import { joinCoordinator, REJOIN_EXIT_CODE } from './joinCoordinator.js';
import { profileAgent } from './profileLayers.js';
import { clockMs, timeline } from './timelineRecorder.js';
import { restoreStage, snapshotStage, type StageSnapshot } from './stageState.js';
import { fetchState, isStateRequest, serveState, type StateSource } from './stateShare.js';
import type { StageContext } from './stageContext.js';
import { buildStage, type SetupMessage } from './buildStage.js';
import { parsePlan } from '../../engine/plan/plan.js';
import { remapVirtualNodes } from '../../engine/plan/elastic.js';
import { disposeStage, localState } from './localState.js';
import { StepUndo } from './stepUndo.js';
import type { ShardedStage } from '../exec/tensorParallel/shardedStage.js';

interface AgentConfig {
  secret: string;
  coordinator: { host: string; port: number };
  /** Address peers use to reach this agent. */
  bindHost: string;
  hostLabel?: string;
  /**
   * Benchmarks and tests of heterogeneous clusters: behave like a device this many times slower —
   * every forward and backward pass is followed by a sleep of (slowdown − 1) × its duration.
   */
  slowdown?: number;
}

/**
 * An agent: one process per device. It joins the coordinator, receives its rank and its part of the
 * plan, links up with the peers it exchanges tensors with, then executes steps and evaluations on
 * command, reporting results back.
 */
export async function runAgent(): Promise<void> {
  const config = await readConfigFromStdin<AgentConfig>('agent');
  const host = config.hostLabel ?? hostname();
  let rank: number | null = null;
  const prefix = () => `[${host} rank ${rank ?? '?'}]`;
  let coordinator: Connection | null = null;
  const log = (level: 'info' | 'warn' | 'error', message: string) => {
    // Once joined, logs travel to the coordinator (which adds host and rank); before that, stderr.
    if (coordinator && !coordinator.closed) coordinator.send({ type: 'log', level, message });
    else process.stderr.write(`${prefix()} ${message}\n`);
  };

  const backend = await selectBackend({ log: (m) => log('info', m) });
  // One mesh per generation of the job (a resize or a lost agent starts a new one, with new ranks).
  /** This stage's snapshot, kept while a resize hands it to the next generation (stateShare.ts). */
  let held: StageSnapshot | null = null;
  const newMesh = () => {
    const m = new PeerMesh(config.secret, (msg) => log('warn', msg));
    m.onStateRequest = (conn, hello) => serveState(conn, held, isStateRequest(hello) ? hello.names.map(String) : []);
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
  });
  log('info', `joined the coordinator; backend ${backend.name} (${backend.detail})`);

  let ctx: StageContext | null = null;
  let asyncState: AsyncState | null = null;
  const undo = new StepUndo();
  /** The step the coordinator discarded while it ran here: its failure is expected, not fatal. */
  let aborting: number | null = null;
  /** The job generation this agent's rank belongs to (its failures are reported with it). */
  let generation = 0;
  const handle = async (message: Message): Promise<void> => {
    const h = message.header;
    if (h.type === 'listen') {
      // A new generation: forget the stage and the links of the old one, listen for the new peers.
      undo.forget();
      if (ctx) disposeStage(ctx);
      ctx = null;
      asyncState = null;
      mesh.close();
      mesh = newMesh();
      coordinator!.send({ type: 'listening', generation: h.generation, rank: h.rank, peerPort: await mesh.listen(config.bindHost) });
    } else if (h.type === 'abort') {
      const step = Number(h.step);
      const undone = ctx ? undo.undo(ctx, step) : false;
      aborting = null;
      coordinator!.send({ type: 'aborted', rank, step, undone });
    } else if (h.type === 'remap') {
      // The same ranks and links, another split of the virtual nodes (a re-balance by speed).
      if (!ctx) throw new Error('A re-mapping arrived before setup.');
      ctx.plan = remapVirtualNodes(ctx.plan, parsePlan(h.plan));
      coordinator!.send({ type: 'remapped', rank, step: h.step });
    } else if (h.type === 'localState') {
      if (!ctx) throw new Error('A state request arrived before setup.');
      const state = localState(ctx);
      coordinator!.send({ type: 'localStateData', rank, stage: ctx.me.stage, replica: ctx.me.replica, shard: ctx.me.shard, tensors: state.tensors, optimizerStep: state.optimizerStep, complete: state.complete }, floatsToBytes(state.values));
    } else if (h.type === 'setup') {
      const setup = h as unknown as SetupMessage & { type: string };
      rank = setup.rank;
      generation = Number(h.generation ?? 0);
      ctx = await buildStage(setup, mesh);
      ctx.slowdown = Math.max(1, Number(config.slowdown ?? 1));
      const { me, plan } = ctx;
      const sharded = ctx.tensorGroup ? ` shard ${me.shard}; runs ${(ctx.module as ShardedStage).describe()}` : '';
      log('info', `stage ${me.stage} replica ${me.replica}: layers ${plan.stages[me.stage].layers.join(', ')}${sharded}`);
      coordinator!.send({ type: 'ready', rank });
    } else if (h.type === 'step') {
      if (!ctx) throw new Error('A step arrived before setup.');
      const step = Number(h.step);
      undo.capture(ctx, step);
      timeline.begin({ stage: ctx.me.stage, rank: ctx.me.rank, replica: ctx.me.replica }, h.timeline === true);
      const result = await runPipelineStep(ctx, step);
      const recorded = timeline.take();
      coordinator!.send({ type: 'stepDone', rank, step, ...result, timeline: recorded.events, memory: recorded.memory });
    } else if (h.type === 'profile') {
      if (!ctx) throw new Error('A profiling request arrived before setup.');
      coordinator!.send({ type: 'profileDone', rank, ...(await profileAgent(ctx, h)) });
    } else if (h.type === 'asyncRun') {
      if (!ctx) throw new Error('An asynchronous run arrived before setup.');
      const stage = ctx.me.stage;
      asyncState ??= createAsyncState(ctx);
      await runAsyncPipeline(
        ctx,
        asyncState,
        Number(h.fromStep),
        Number(h.toStep),
        (r) => coordinator!.send({ type: 'stepDone', rank, step: r.step, loss: r.loss, computeMs: r.computeMs, allReduceMs: r.allReduceMs, stage, stats: r.stats, timeline: r.timeline }),
        Number(h.timelineEverySteps ?? 0),
      );
    } else if (h.type === 'eval') {
      if (!ctx) throw new Error('An evaluation arrived before setup.');
      const result = await runPipelineEval(ctx, Number(h.evalId));
      coordinator!.send({ type: 'evalDone', rank, evalId: h.evalId, ...result });
    } else if (h.type === 'snapshot') {
      if (!ctx) throw new Error('A checkpoint request arrived before setup.');
      // Every agent takes part (sharded state is gathered); the first replica's first shard speaks.
      const snap = await snapshotStage(ctx);
      if (h.keep === true) {
        // A resize: keep the state here for the next generation to fetch; only its names travel.
        held = snap;
        coordinator!.send({ type: 'snapshotData', rank, snapshotId: h.snapshotId, stage: ctx.me.stage, tensors: snap?.tensors ?? null, optimizerStep: snap?.optimizerStep ?? null, held: snap !== null });
      } else {
        coordinator!.send(
          { type: 'snapshotData', rank, snapshotId: h.snapshotId, stage: ctx.me.stage, tensors: snap?.tensors ?? null, optimizerStep: snap?.optimizerStep ?? null },
          snap ? floatsToBytes(snap.values) : undefined,
        );
      }
    } else if (h.type === 'fetchState') {
      if (!ctx) throw new Error('A state hand-over arrived before setup.');
      const sources = h.sources as StateSource[];
      const fetched = await fetchState(config.secret, sources);
      restoreStage(ctx, fetched.tensors, fetched.body, Number(h.optimizerStep));
      log('info', `restored ${fetched.tensors.length} tensors (${(fetched.bytes / 2 ** 20).toFixed(2)} MiB) from peer(s) ${sources.map((s) => `${s.host}:${s.port}`).join(', ')}`);
      coordinator!.send({ type: 'restored', rank, fromPeers: sources.length, bytes: fetched.bytes });
    } else if (h.type === 'dropState') {
      held = null;
    } else if (h.type === 'restore') {
      if (!ctx) throw new Error('A restore arrived before setup.');
      restoreStage(ctx, h.tensors as CheckpointTensor[], bytesToFloats(message.payload), Number(h.optimizerStep));
      coordinator!.send({ type: 'restored', rank });
    } else if (h.type === 'shutdown') {
      mesh.close();
      coordinator!.close();
      process.exit(0);
    }
  };

  // Messages are handled strictly one after another: a step must finish before the next begins.
  let queue = Promise.resolve();
  coordinator.onMessage = (message) => {
    // Clock pings are answered at once, outside the queue: the reply's stamp is what the offset needs.
    if (message.header.type === 'clock') return void coordinator!.send({ type: 'clockReply', rank, seq: message.header.seq, agentMs: clockMs() });
    // A discarded step may be waiting on a lost peer: closing the links ends its receives at once.
    if (message.header.type === 'abort') {
      aborting = Number(message.header.step);
      mesh.abort();
    }
    queue = queue.then(() => handle(message)).catch((err: Error) => {
      if (message.header.type === 'step' && Number(message.header.step) === aborting) {
        log('info', `step ${aborting} discarded: ${err.message}`);
        return;
      }
      // Reported, not fatal here: when a peer was lost the coordinator discards the step and carries
      // on with the survivors; otherwise it ends the job and shuts every agent down.
      log('error', `failed: ${err.message}`);
      coordinator!.send({ type: 'failed', rank, generation, step: message.header.type === 'step' ? Number(message.header.step) : null, message: err.message });
    });
  };
  // Heartbeats let the coordinator tell a slow agent from a stopped one. Timers fire between the
  // stage's compute calls, which take milliseconds, so a busy agent still beats.
  setInterval(() => {
    if (!coordinator!.closed) coordinator!.send({ type: 'heartbeat' });
  }, 1000).unref();
  coordinator.onClose = () => {
    // Under a deployed job's supervisor, exit code 75 asks to be started again: the coordinator may
    // be restarting after a crash (agents/coordinator/restart.ts), and the new agent rejoins it.
    const rejoin = process.env.SHOAL_SUPERVISED === '1';
    process.stderr.write(`${prefix()} lost the coordinator; ${rejoin ? 'exiting to rejoin it if it restarts' : 'exiting'}.\n`);
    process.exit(rejoin ? REJOIN_EXIT_CODE : 1);
  };
}
