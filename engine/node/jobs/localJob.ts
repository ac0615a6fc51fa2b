import { cpus } from 'node:os';
import { basename, join } from 'node:path';
import type { TrainingSetup } from '../../protocol/trainingSetup.js';
import type { ModelGraph } from '../../model/graph.js';
import type { Plan } from '../../plan/plan.js';
import { MAX_RESTARTS } from '../../plan/restartPolicy.js';
import type { FinalEvent, JobEvent, JobState } from '../../protocol/events.js';
import type { JobSummary } from '../../protocol/studioApi.js';
import { LocalLauncher } from '../deploy/localLauncher.js';
import type { ProcessExit } from '../deploy/supervisedProcess.js';
import { attachJob } from './attachJob.js';
import { removeControlFile, writeControlFile, writeMembershipFile } from './controlFile.js';
import { deployJob } from './deployJob.js';
import type { DeployRecord } from './deployRecord.js';
import { agentConfig, assertPlanRuns, defaultEvalEvery, newJobId, stepsFor, tuningOf, type CoordinatorTuning } from './jobConfigs.js';
import { requestCheckpointAndStop, type ResizeRequest } from './jobControl.js';
import { checkResizable, resizeJob } from './resizeJob.js';
import { latestCheckpoint, runsRoot } from './runStore.js';
import { releaseRunLock } from './runLock.js';
import type { StudioJob } from './studioJob.js';

export interface LocalJobOptions extends CoordinatorTuning {
  model: ModelGraph;
  plan: Plan;
  agents: number;
  /** Data and losses (checked against the model before); absent: the built-in models' MNIST digits. */
  training?: TrainingSetup;
  /** Lines about the data and losses chosen (what `shoal train` prints), logged when the job starts. */
  notes?: string[];
  /** Either a number of epochs over the training samples or an exact number of steps. */
  epochs?: number;
  steps?: number;
  /** The run's folder (job.json, checkpoints/); default: a new folder under runsRoot(). */
  runDir?: string;
  /** Save a checkpoint every this many steps (the last step is always saved). */
  checkpointEverySteps?: number;
  /** Resume from this checkpoint file: parameters, optimizer state and step. */
  resumeFrom?: string;
  /** Evaluate on the test set every this many steps (and at the end); default: every epoch. */
  evalEverySteps?: number;
  /** Benchmarks and tests: agent i behaves as a device slowdowns[i] times slower (sleeps after each pass). */
  agentSlowdowns?: number[];
  /** How often a coordinator that crashes mid-job is restarted from the newest checkpoint (default: the restart policy's; 0 = never). */
  coordinatorRestarts?: number;
  onEvent: (event: JobEvent) => void;
}

/** The default "This machine" cluster size: one agent per core, at least two. */
export function defaultLocalAgents(): number {
  return Math.max(2, cpus().length);
}

/**
 * A job on this machine whose processes end with this one (`shoal train`, the studio's Train): the
 * one job lifecycle — deployJob, attachJob, resizeJob, stop — through LocalLauncher's attached mode.
 * One coordinator process and N agent processes talk over loopback TCP, authenticated with a fresh
 * per-job secret each reads from standard input; a crashed coordinator is restarted by its
 * supervisor and resumes from the newest checkpoint, as on a host (engine/plan/restartPolicy.ts).
 */
export class LocalJob implements StudioJob {
  readonly id: string;
  readonly events: JobEvent[] = [];
  readonly startedAt = Date.now();
  state: JobState = 'starting';
  /** Folder of this run on disk (job.json, events.jsonl, checkpoints/). */
  readonly runDir: string;
  /** Resolves with the final event, or rejects with the reason the job failed or was stopped. */
  done: Promise<FinalEvent> | null = null;
  private readonly launcher: LocalLauncher;
  private record: DeployRecord | null = null;
  private secret = '';
  private stopping = false;
  /** Between a coordinator's crash and its successor's first word: agents that exit then end with it. */
  private coordinatorDown = false;
  private agentsStarted = 0;
  private readonly following = new AbortController();
  /** Resizes waiting for their generation. */
  private readonly followers = new Set<{ onEvent: (e: JobEvent) => void; onEnd: (reason: string) => void }>();
  private readonly recentOutput = new Map<string, string[]>();
  private resolveFinal: (event: FinalEvent) => void = () => {};
  private failWith: (err: Error) => void = () => {};

  constructor(readonly options: LocalJobOptions) {
    assertPlanRuns(options.plan, options.model, options.agents);
    this.id = newJobId();
    this.runDir = options.runDir ?? join(runsRoot(), this.id);
    this.launcher = new LocalLauncher({
      runDir: this.runDir,
      ...(options.coordinatorRestarts === undefined ? {} : { coordinatorRestarts: options.coordinatorRestarts }),
      onOutput: (name, line) => this.onOutput(name, line),
      onExit: (name, role, exit, pid) => (role === 'coordinator' ? this.onCoordinatorExit(exit) : this.onAgentExit(name, exit, pid)),
    });
  }

  /** Start the processes; the returned promise is also kept as `done`. */
  start(): Promise<FinalEvent> {
    if (!this.done) {
      this.done = this.run();
      this.done.catch(() => {});
    }
    return this.done;
  }

  /** The process id of the current coordinator (tests kill it to check the recovery). */
  get coordinatorPid(): number | undefined {
    return this.launcher.pidOf('coordinator');
  }

  private emit(event: JobEvent): void {
    if (event.type === 'status') this.state = event.state;
    // Who holds which rank now, for `shoal resize` in another process (no secret in it).
    if (event.type === 'membership') writeMembershipFile(this.runDir, event);
    this.events.push(event);
    this.options.onEvent(event);
    for (const f of this.followers) f.onEvent(event);
  }

  private log(level: 'info' | 'warn' | 'error', host: string, rank: number | null, message: string): void {
    this.emit({ type: 'log', level, host, rank, message, time: Date.now() });
  }

  private async run(): Promise<FinalEvent> {
    const o = this.options;
    const steps = stepsFor(o.plan, o.epochs, o.steps, o.training?.trainSamples);
    this.emit({ type: 'status', state: 'starting', message: `starting a coordinator and ${o.agents} agents for ${steps} steps`, time: Date.now() });
    for (const note of o.notes ?? []) this.log('info', 'studio', null, note);
    const finalEvent = new Promise<FinalEvent>((resolve, reject) => ((this.resolveFinal = resolve), (this.failWith = reject)));
    finalEvent.catch(() => {}); // `done` carries the outcome to whoever awaits it
    try {
      const deployed = await deployJob({
        launcher: this.launcher,
        jobId: this.id,
        runDir: this.runDir,
        model: o.model,
        plan: o.plan,
        training: o.training,
        agents: o.agents,
        steps,
        evalEverySteps: o.evalEverySteps ?? defaultEvalEvery(o.plan, o.training),
        checkpointEverySteps: o.checkpointEverySteps,
        resumeFrom: o.resumeFrom,
        tuning: tuningOf(o),
        agentSlowdowns: o.agentSlowdowns,
        cluster: 'local',
        hosts: [],
        onWarning: (message) => this.log('warn', 'studio', null, message),
      });
      this.record = deployed.record;
      this.agentsStarted = o.agents;
      this.secret = await this.coordinatorSecret();
    } catch (err) {
      this.fail((err as Error).message);
      releaseRunLock(this.runDir);
      throw err;
    }
    if (this.stopping) {
      // Stopped while the processes were starting: those started since go too.
      this.launcher.end();
      return finalEvent;
    }
    // How `shoal resize` in another process reaches this job (mode 600; removed when the job ends).
    writeControlFile(this.runDir, { jobId: this.id, host: '127.0.0.1', port: this.record.coordinator.port, secret: this.secret, ownerPid: process.pid });
    void this.follow(this.record);
    return finalEvent;
  }

  /** The job secret, as every launcher keeps it: in the coordinator's config (here in memory). */
  private async coordinatorSecret(): Promise<string> {
    const config = await this.launcher.readJobFile('localhost', this.id, 'temp', 'coordinator.config');
    return String((JSON.parse(config ?? '{}') as { secret?: unknown }).secret ?? '');
  }

  /** The coordinator's event stream (attachJob: across its restarts too); its final event ends the job. */
  private async follow(record: DeployRecord): Promise<void> {
    const onEvent = (event: JobEvent) => {
      this.coordinatorDown = false;
      if (event.type === 'status' && event.state === 'starting' && this.events.some((e) => e.type === 'status')) return;
      this.emit(event);
      // The coordinator's last word: nothing more is written to the run folder, which a resume may take now.
      if (event.type === 'final' || (event.type === 'status' && (event.state === 'failed' || event.state === 'stopped'))) releaseRunLock(this.runDir);
      if (event.type === 'final') this.resolveFinal(event);
      // Stopped with a checkpoint on request (checkpointAndStop): the coordinator ends on its own.
      if (event.type === 'status' && event.state === 'stopped') this.failWith(new Error(event.message ?? 'The job was stopped.'));
      if (event.type === 'status' && event.state === 'failed') {
        this.failWith(new Error(event.message ?? 'The job failed.'));
        this.launcher.end();
      }
    };
    try {
      const result = await attachJob(this.launcher, record, onEvent, { follow: true, signal: this.following.signal });
      // The coordinator went for good without saying how the job ended: its exit says (onCoordinatorExit).
      if (!result.ended && !this.stopping) setTimeout(() => this.fail('Lost the connection to the coordinator.'), 3000).unref();
    } catch (err) {
      if (!this.stopping) this.fail(`Lost the connection to the coordinator: ${(err as Error).message}`);
    }
  }

  private onOutput(name: string, line: string): void {
    // The coordinator's own log lines reach us as events; an agent writes to stderr only what it cannot
    // send to the coordinator: start-up and crashes.
    if (name === 'coordinator') return;
    const recent = this.recentOutput.get(name) ?? [];
    recent.push(line);
    if (recent.length > 5) recent.shift();
    this.recentOutput.set(name, recent);
    this.log('info', hostOf(name), null, line);
  }

  private get ended(): boolean {
    return this.stopping || this.state === 'finished' || this.state === 'failed' || this.state === 'stopped';
  }

  private onCoordinatorExit(exit: ProcessExit): void {
    const how = exit.code === null ? 'was killed' : `exited with code ${exit.code}`;
    if (exit.restarting && !this.ended) {
      // Its supervisor starts it again: it resumes from the newest checkpoint, and the agents rejoin.
      this.coordinatorDown = true;
      for (const f of this.followers) f.onEnd(`the coordinator ${how} and is restarted`);
      const checkpoint = latestCheckpoint(join(this.runDir, 'checkpoints')) ?? this.options.resumeFrom;
      const lastStep = [...this.events].reverse().find((e) => e.type === 'step');
      const at = lastStep?.type === 'step' ? ` after step ${lastStep.step}` : '';
      const from = checkpoint ? `checkpoint ${basename(checkpoint)}` : 'the first step (no checkpoint was written yet)';
      this.log('warn', 'coordinator', null, `The coordinator ${how}${at}; restarting it from ${from} (restart ${exit.restarts} of at most ${this.options.coordinatorRestarts ?? MAX_RESTARTS}).`);
      this.emit({ type: 'status', state: 'starting', message: `restarting the coordinator from ${from}`, time: Date.now() });
      return;
    }
    if (exit.restarting) return;
    removeControlFile(this.runDir);
    // The coordinator (the one writer of events and checkpoints there) is gone: the folder is free.
    releaseRunLock(this.runDir);
    if (this.ended) {
      // Agents exit when the coordinator tells them or goes away; one that was fenced while stopped
      // (SIGSTOP) cannot notice, so whatever is left is ended.
      setTimeout(() => this.launcher.end(), 1000).unref();
      return;
    }
    const restarted = exit.restarts > 0 ? ` after ${exit.restarts} restart${exit.restarts === 1 ? '' : 's'}` : '';
    const newest = latestCheckpoint(join(this.runDir, 'checkpoints'));
    const wayBack = newest ? ` \`shoal resume ${this.runDir}\` continues it from its newest checkpoint, ${basename(newest)}.` : ' It wrote no checkpoint, so it has to start again (--checkpoint-every N saves them as it goes).';
    this.fail(`The coordinator ${how} while the job was ${this.state}${restarted}.${wayBack}`);
  }

  private onAgentExit(name: string, exit: ProcessExit, pid: number | undefined): void {
    // A clean exit, one its supervisor answers with a restart (it rejoins a restarted coordinator), and
    // any exit once the job has ended or while its coordinator is down (agents end with it) are expected.
    if (exit.code === 0 || exit.restarting || this.ended || this.coordinatorDown) return;
    const host = hostOf(name);
    const placed = this.events.find((e) => e.type === 'agent' && e.pid === pid);
    const who = placed?.type === 'agent' ? `Agent rank ${placed.rank} on ${host}` : `Agent ${host}`;
    const how = exit.signal ? `was killed by ${exit.signal}` : `exited with code ${exit.code}`;
    const recent = this.recentOutput.get(name) ?? [];
    const message = `${who} (pid ${pid}) ${how} while the job was ${this.state}.${recent.length ? ` Its last output: ${recent.join(' | ')}` : ''}`;
    // Once running, a lost agent is the coordinator's to handle (it goes on without it, or fails the job).
    if (this.state === 'running') this.log('warn', host, null, message);
    else this.fail(message);
  }

  /**
   * Change the job's agents without a restart: start `add` more agent processes here and/or release
   * the agents holding ranks `remove` (resizeJob.ts). Resolves once the coordinator has applied it, at
   * the next step boundary (a `membership` event). Its agents are children of this process, so it
   * takes no agents on other hosts.
   */
  async resize(request: ResizeRequest & { hosts?: string[] }): Promise<void> {
    if (request.hosts?.length) throw new Error(`Job ${this.id} runs on this machine: it takes agents here only (add), not on hosts.`);
    if (!this.record || this.state !== 'running') throw new Error(`Job ${this.id} is ${this.state}; only a running job can be resized.`);
    checkResizable(this.id, this.options.plan.schedule);
    const port = this.record.coordinator.port;
    await resizeJob(
      {
        jobId: this.id,
        at: { host: '127.0.0.1', port, secret: this.secret },
        // This process already follows the job: its own events, from now on.
        events: async (onEvent, onEnd) => {
          const follower = { onEvent, onEnd };
          this.followers.add(follower);
          return () => this.followers.delete(follower);
        },
        current: () => [...this.events].reverse().find((e): e is Extract<JobEvent, { type: 'membership' }> => e.type === 'membership'),
        startAgents: async (add) => {
          for (let n = 0; n < add; n++) {
            const index = this.agentsStarted++;
            const config = agentConfig(this.secret, { host: '127.0.0.1', port }, '127.0.0.1', hostOf(`agent-${index}`), this.options.agentSlowdowns?.[index]);
            await this.launcher.start('localhost', { jobId: this.id, role: 'agent', name: `agent-${index}`, config });
          }
        },
      },
      request,
    );
  }

  private fail(message: string): void {
    if (this.state === 'failed' || this.state === 'finished') return;
    this.emit({ type: 'status', state: 'failed', message, time: Date.now() });
    this.failWith(new Error(message));
    this.following.abort();
    this.launcher.end();
  }

  /**
   * Stop with a checkpoint (Ctrl-C): the coordinator saves one at the next step boundary and ends the
   * job with a `stopped` status. Without that within `waitMs`, or when the job is not running yet,
   * the job is stopped at once. Resolves with the checkpoint this stop wrote (null: none).
   */
  async checkpointAndStop(waitMs = 30_000): Promise<{ checkpoint: string | null; timedOut: boolean }> {
    if (!this.record || !this.secret || this.ended) {
      await this.stop();
      return { checkpoint: null, timedOut: false };
    }
    let follower: { onEvent: (e: JobEvent) => void; onEnd: () => void } | undefined;
    const outcome = new Promise<{ checkpoint: string | null; timedOut: boolean }>((resolve) => {
      let saved: string | null = null;
      const timer = setTimeout(() => resolve({ checkpoint: null, timedOut: true }), waitMs);
      follower = {
        onEvent: (e) => {
          if (e.type === 'checkpoint' && e.action === 'saved') saved = e.path;
          const end = e.type === 'final' || (e.type === 'status' && (e.state === 'stopped' || e.state === 'failed'));
          if (!end) return;
          clearTimeout(timer);
          resolve({ checkpoint: e.type === 'status' && e.state === 'failed' ? null : saved, timedOut: false });
        },
        onEnd: () => {},
      };
      this.followers.add(follower);
    });
    try {
      await requestCheckpointAndStop({ host: '127.0.0.1', port: this.record.coordinator.port, secret: this.secret });
    } catch (err) {
      this.log('warn', 'studio', null, `Could not ask the coordinator for a checkpoint (${(err as Error).message}); stopping the job without one.`);
      this.followers.delete(follower!);
      await this.stop();
      return { checkpoint: null, timedOut: false };
    }
    const result = await outcome;
    this.followers.delete(follower!);
    if (result.timedOut) await this.stop();
    return result;
  }

  async stopWithCheckpoint(): Promise<void> {
    await this.checkpointAndStop();
  }

  /** Stop the job: every process of it is ended, the coordinator first. */
  async stop(): Promise<void> {
    if (this.ended) {
      // Nothing to stop, but an agent fenced while stopped (SIGSTOP) may still be there: end it now,
      // rather than leave it to a timer that a closing studio or CLI may not outlive.
      this.launcher.end();
      await this.launcher.exited();
      return;
    }
    this.stopping = true;
    removeControlFile(this.runDir);
    this.emit({ type: 'status', state: 'stopped', message: 'stopped by the user', time: Date.now() });
    this.failWith(new Error('The job was stopped.'));
    this.following.abort();
    await this.launcher.stop(this.id);
  }

  summary(): JobSummary {
    const { model, agents, plan } = this.options;
    return { id: this.id, model: model.name, state: this.state, startedAt: this.startedAt, agents, events: this.events.length, schedule: plan.schedule };
  }

  /** Wait until every process of the job has exited (after `done`). */
  async exited(): Promise<void> {
    await this.launcher.exited();
  }
}

/** `agent-3` is known as `local-3` in events and logs (LocalLauncher names attached agents so). */
const hostOf = (name: string) => name.replace(/^agent-/, 'local-');
