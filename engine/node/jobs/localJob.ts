import { existsSync } from 'node:fs';
import { cpus } from 'node:os';
import { join } from 'node:path';
import type { TrainingSetup } from '../../protocol/trainingSetup.js';
import type { ModelGraph } from '../../model/graph.js';
import type { Plan } from '../../plan/plan.js';
import { MAX_RESTARTS } from '../../plan/restartPolicy.js';
import type { FinalEvent, JobEvent, JobState } from '../../protocol/events.js';
import type { JobSummary } from '../../protocol/studioApi.js';
import { LocalLauncher } from '../deploy/localLauncher.js';
import { attachJob } from './attachJob.js';
import { removeControlFile, writeControlFile, writeMembershipFile } from './controlFile.js';
import { deployJob } from './deployJob.js';
import type { DeployRecord } from './deployRecord.js';
import { agentConfig, defaultEvalEvery, newJobId, tuningOf, type CoordinatorTuning } from './jobConfigs.js';
import { preflightJob } from './jobPreflight.js';
import { requestCheckpointAndStop, type ResizeRequest } from './jobControl.js';
import { JobEventLog } from './jobEventLog.js';
import { LocalJobExits } from './localJobExits.js';
import { checkResizable, resizeJob } from './resizeJob.js';
import { runsRoot } from './runStore.js';
import { releaseRunLock } from './runLock.js';
import { discardUnstartedRun } from './runFolderGuard.js';
import { awaitStopOutcome, type StopOutcome } from './stopOutcome.js';
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
  /** Replace an earlier run in `runDir` (runFolderGuard.ts); without it such a folder is refused. */
  overwrite?: boolean;
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
  /** Each event with its index in the job's history (`events`). */
  onEvent: (event: JobEvent, index: number) => void;
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
  readonly startedAt = Date.now();
  /** Folder of this run on disk (job.json, events.jsonl, checkpoints/). */
  readonly runDir: string;
  /** How many steps it runs (checked before anything starts: jobPreflight.ts). */
  readonly steps: number;
  /** Resolves with the final event, or rejects with the reason the job failed or was stopped. */
  done: Promise<FinalEvent> | null = null;
  private readonly launcher: LocalLauncher;
  /** Whether the run folder was there before this job (a resumed run's, an empty one): then only its own files are ever removed. */
  private readonly folderExisted: boolean;
  private record: DeployRecord | null = null;
  private secret = '';
  private stopping = false;
  private agentsStarted = 0;
  private readonly following = new AbortController();
  private readonly journal: JobEventLog;
  private readonly exits: LocalJobExits;
  private resolveFinal: (event: FinalEvent) => void = () => {};
  private failWith: (err: Error) => void = () => {};

  constructor(readonly options: LocalJobOptions) {
    this.steps = preflightJob(options);
    this.id = newJobId();
    this.runDir = options.runDir ?? join(runsRoot(), this.id);
    this.folderExisted = existsSync(this.runDir);
    this.journal = new JobEventLog((event, index) => {
      // Who holds which rank now, for `shoal resize` in another process (no secret in it).
      if (event.type === 'membership') writeMembershipFile(this.runDir, event);
      options.onEvent(event, index);
    });
    const job = { runDir: this.runDir, journal: this.journal, ended: () => this.ended, fail: (m: string) => this.fail(m), endProcesses: () => this.launcher.end(), hostOf: (n: string) => this.hostOf(n) };
    const exits = (this.exits = new LocalJobExits(job, { resumeFrom: options.resumeFrom, max: options.coordinatorRestarts ?? MAX_RESTARTS }));
    this.launcher = new LocalLauncher({
      runDir: this.runDir,
      ...(options.coordinatorRestarts === undefined ? {} : { coordinatorRestarts: options.coordinatorRestarts }),
      onOutput: (name, line) => exits.onOutput(name, line),
      onExit: (name, role, exit, pid) => (role === 'coordinator' ? exits.onCoordinatorExit(exit) : exits.onAgentExit(name, exit, pid)),
    });
  }

  /** Start the processes; the returned promise is also kept as `done`. */
  start(): Promise<FinalEvent> {
    if (!this.done) {
      this.done = this.run().catch(async (err: unknown) => {
        await this.discardIfUnstarted();
        throw err;
      });
      this.done.catch(() => {});
    }
    return this.done;
  }

  /** The process id of the current coordinator (tests kill it to check the recovery). */
  get coordinatorPid(): number | undefined {
    return this.launcher.pidOf('coordinator');
  }

  get events(): JobEvent[] {
    return this.journal.events;
  }

  get state(): JobState {
    return this.journal.state;
  }

  private async run(): Promise<FinalEvent> {
    const o = this.options;
    const steps = this.steps;
    this.journal.emit({ type: 'status', state: 'starting', message: `starting a coordinator and ${o.agents} agents for ${steps} steps`, time: Date.now() });
    for (const note of o.notes ?? []) this.journal.log('info', 'studio', null, note);
    const finalEvent = new Promise<FinalEvent>((resolve, reject) => ((this.resolveFinal = resolve), (this.failWith = reject)));
    finalEvent.catch(() => {}); // `done` carries the outcome to whoever awaits it
    try {
      const deployed = await deployJob({
        launcher: this.launcher,
        jobId: this.id,
        runDir: this.runDir,
        overwrite: o.overwrite,
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
        onWarning: (message) => this.journal.log('warn', 'studio', null, message),
      });
      this.record = deployed.record;
      this.agentsStarted = o.agents;
      // The job secret, as every launcher keeps it: in the coordinator's config (here in memory).
      const config = await this.launcher.readJobFile('localhost', this.id, 'temp', 'coordinator.config');
      this.secret = String((JSON.parse(config ?? '{}') as { secret?: unknown }).secret ?? '');
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

  /** The coordinator's event stream (attachJob: across its restarts too); its final event ends the job. */
  private async follow(record: DeployRecord): Promise<void> {
    const onEvent = (event: JobEvent) => {
      this.exits.coordinatorSpoke();
      if (event.type === 'status' && event.state === 'starting' && this.events.some((e) => e.type === 'status')) return;
      this.journal.emit(event);
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

  /**
   * Its agents' processes are named `agent-<i>` (deployJob) and known in events and logs by the host
   * LocalLauncher gives agent i (`local-<i>`); other processes by their name.
   */
  private hostOf(name: string): string {
    const index = /^agent-(\d+)$/.exec(name)?.[1];
    return index === undefined ? name : this.launcher.agentHost(this.launcher.targets[0], Number(index));
  }

  private get ended(): boolean {
    return this.stopping || this.journal.over;
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
        events: async (onEvent, onEnd) => this.journal.follow({ onEvent, onEnd }),
        current: () => this.journal.latest('membership'),
        startAgents: async (add) => {
          for (let n = 0; n < add; n++) {
            const index = this.agentsStarted++;
            const config = agentConfig(this.secret, { host: '127.0.0.1', port }, '127.0.0.1', this.hostOf(`agent-${index}`), this.options.agentSlowdowns?.[index]);
            await this.launcher.start('localhost', { jobId: this.id, role: 'agent', name: `agent-${index}`, config });
          }
        },
      },
      request,
    );
  }

  private fail(message: string): void {
    if (this.state === 'failed' || this.state === 'finished') return;
    this.journal.emit({ type: 'status', state: 'failed', message, time: Date.now() });
    this.failWith(new Error(message));
    this.following.abort();
    this.launcher.end();
  }

  /**
   * Stop with a checkpoint (Ctrl-C): the coordinator saves one at the next step boundary and ends the
   * job with a `stopped` status. Without that within `waitMs`, or when the job is not running yet,
   * the job is stopped at once. Resolves with the checkpoint this stop wrote (null: none).
   */
  async checkpointAndStop(waitMs = 30_000): Promise<StopOutcome> {
    if (!this.record || !this.secret || this.ended) {
      await this.stop();
      return { checkpoint: null, timedOut: false };
    }
    const { outcome, cancel } = awaitStopOutcome(this.journal, waitMs);
    try {
      await requestCheckpointAndStop({ host: '127.0.0.1', port: this.record.coordinator.port, secret: this.secret });
    } catch (err) {
      this.journal.log('warn', 'studio', null, `Could not ask the coordinator for a checkpoint (${(err as Error).message}); stopping the job without one.`);
      cancel();
      await this.stop();
      return { checkpoint: null, timedOut: false };
    }
    const result = await outcome;
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
    this.journal.emit({ type: 'status', state: 'stopped', message: 'stopped by the user', time: Date.now() });
    this.failWith(new Error('The job was stopped.'));
    this.following.abort();
    await this.launcher.stop(this.id);
  }

  summary(): JobSummary {
    const { model, agents, plan } = this.options;
    return { id: this.id, model: model.name, state: this.state, startedAt: this.startedAt, agents, events: this.events.length, schedule: plan.schedule };
  }

  /**
   * A new job that ended before its first step (an agent refused the weights, an image would not
   * decode) leaves no half-made run folder: once its processes are gone, what it wrote is removed.
   * A resumed run's folder is the user's run and stays as it was.
   */
  private async discardIfUnstarted(): Promise<void> {
    if (this.options.resumeFrom !== undefined || this.events.some((e) => e.type === 'step')) return;
    await this.launcher.exited();
    discardUnstartedRun(this.runDir, this.id, this.folderExisted);
  }

  /** Wait until every process of the job has exited (after `done`). */
  async exited(): Promise<void> {
    await this.launcher.exited();
  }
}
