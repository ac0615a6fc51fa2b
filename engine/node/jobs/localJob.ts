import { cpus } from 'node:os';
import { basename, join } from 'node:path';
import type { TrainingSetup } from '../../protocol/trainingSetup.js';
import type { ModelGraph } from '../../model/graph.js';
import type { Plan } from '../../plan/plan.js';
import { MAX_RESTARTS, restartsAfterExit, teamAfterRestart } from '../../plan/restartPolicy.js';
import type { FinalEvent, JobEvent, JobState } from '../../protocol/events.js';
import { agentBundlePath } from '../deploy/agentBundle.js';
import { ChildProcesses, hasExited, startAgentProcess, type StartedProcess } from '../deploy/localProcess.js';
import { removeControlFile, writeControlFile, writeMembershipFile } from './controlFile.js';
import { agentConfig, assertPlanRuns, coordinatorConfig, defaultEvalEvery, newJobId, newJobSecret, stepsFor, tuningOf, type CoordinatorRestart, type CoordinatorTuning, type JobSpec } from './jobConfigs.js';
import { followEvents, type ResizeRequest } from './jobControl.js';
import { checkResizable, resizeJob } from './resizeJob.js';
import { createRunDir, latestCheckpoint } from './runStore.js';

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
 * A job on this machine: one coordinator process and N agent processes, all talking over loopback
 * TCP, authenticated with a fresh per-job secret handed to each through standard input.
 */
export class LocalJob {
  readonly id: string;
  readonly events: JobEvent[] = [];
  readonly startedAt = Date.now();
  state: JobState = 'starting';
  /** Folder of this run on disk (set when the job starts). */
  runDir = '';
  /** Resolves with the final event, or rejects with the reason the job failed or was stopped. */
  done: Promise<FinalEvent> | null = null;
  private readonly processes = new ChildProcesses();
  private stopping = false;

  constructor(readonly options: LocalJobOptions) {
    assertPlanRuns(options.plan, options.model, options.agents);
    this.id = newJobId();
  }

  /** Start the processes; the returned promise is also kept as `done`. */
  start(): Promise<FinalEvent> {
    if (!this.done) {
      this.done = this.run();
      this.done.catch(() => {});
    }
    return this.done;
  }

  private emit(event: JobEvent): void {
    if (event.type === 'status') this.state = event.state;
    // Who holds which rank now, for `shoal resize` in another process (no secret in it).
    if (event.type === 'membership' && this.runDir) writeMembershipFile(this.runDir, event);
    this.events.push(event);
    this.options.onEvent(event);
    for (const f of this.followers) f.onEvent(event);
  }

  private log(level: 'info' | 'warn' | 'error', host: string, rank: number | null, message: string): void {
    this.emit({ type: 'log', level, host, rank, message, time: Date.now() });
  }

  private async run(): Promise<FinalEvent> {
    const { model, plan, agents } = this.options;
    const steps = stepsFor(plan, this.options.epochs, this.options.steps, this.options.training?.trainSamples);
    this.runDir = createRunDir({ jobId: this.id, createdAt: new Date(this.startedAt).toISOString(), model: model.source?.modelFile ?? model.name, plan, agents, steps, ...(this.options.training ? { training: this.options.training } : {}) }, this.options.runDir);
    this.emit({ type: 'status', state: 'starting', message: `starting a coordinator and ${agents} agents for ${steps} steps`, time: Date.now() });
    for (const note of this.options.notes ?? []) this.log('info', 'studio', null, note);
    const finalEvent = new Promise<FinalEvent>((resolve, reject) => {
      this.resolveFinal = resolve;
      this.failWith = reject;
    });
    finalEvent.catch(() => {}); // `done` carries the outcome to whoever awaits it
    this.spec = this.jobSpec(steps);
    await this.startCoordinator(newJobSecret());
    return finalEvent;
  }

  /**
   * Start a coordinator (fresh, or resuming from a checkpoint after the previous one crashed), attach
   * to its events and start the agents, which join it on their own.
   */
  private async startCoordinator(secret: string, restart?: CoordinatorRestart): Promise<void> {
    const agents = restart?.team?.agents ?? this.options.agents;
    const bundle = agentBundlePath();
    const epoch = ++this.coordinatorEpoch;
    let port!: (p: number) => void;
    const listening = new Promise<number>((resolve) => (port = resolve));
    const coordinator = startAgentProcess(
      bundle,
      'coordinator',
      coordinatorConfig(this.spec!, secret, { runDir: this.runDir }, restart),
      () => {}, // the coordinator's own log lines reach us as events
      (line) => {
        try {
          const parsed = JSON.parse(line) as { listening?: number };
          if (parsed.listening) port(parsed.listening);
        } catch {
          this.log('info', 'coordinator', null, line);
        }
      },
    );
    this.processes.add(coordinator);
    this.coordinatorProcess = coordinator;
    const coordinatorPort = await Promise.race([
      listening,
      coordinator.exited.then((code) => Promise.reject(new Error(`The coordinator exited (code ${code}) before it started listening.`))),
    ]).catch((err: Error) => {
      this.fail(err.message);
      throw err;
    });

    await this.attach(coordinatorPort, secret, epoch);
    this.coordinator = { port: coordinatorPort, secret, bundle };
    // How `shoal resize` in another process reaches this job (mode 600; removed when the job ends).
    writeControlFile(this.runDir, { jobId: this.id, host: '127.0.0.1', port: coordinatorPort, secret, ownerPid: process.pid });
    for (let i = 0; i < agents; i++) this.spawnAgent();
    coordinator.exited.then((code) => {
      removeControlFile(this.runDir);
      if (epoch !== this.coordinatorEpoch) return;
      const ended = this.stopping || this.state === 'finished' || this.state === 'failed';
      if (ended) {
        // Agents exit when the coordinator tells them or goes away; one that was fenced while stopped
        // (SIGSTOP) cannot notice, so whatever is left is ended.
        setTimeout(() => this.kill(), 1000).unref();
      } else if (this.state === 'running' && restartsAfterExit('coordinator', code, this.restarts, this.options.coordinatorRestarts)) {
        void this.resumeAfterCrash(secret, code);
      } else {
        const how = code === null ? 'was killed' : `exited with code ${code}`;
        const restarted = this.restarts > 0 ? ` after ${this.restarts} restart${this.restarts === 1 ? '' : 's'}` : '';
        this.fail(`The coordinator ${how} while the job was ${this.state}${restarted}. \`shoal resume ${this.runDir}\` continues it from its newest checkpoint.`);
      }
    });
  }

  /**
   * The coordinator died in the middle of the job (killed, out of memory, a bug): the agents it
   * leaves behind are ended, and a new coordinator continues from the newest checkpoint with new
   * agents. Steps since that checkpoint run again — with the same data and arithmetic, so the result
   * equals an uninterrupted run. A job failure the coordinator reported itself is not retried.
   */
  private async resumeAfterCrash(secret: string, code: number | null): Promise<void> {
    this.restarts++;
    for (const f of this.followers) f.onEnd(`the coordinator ${code === null ? 'was killed' : `exited with code ${code}`} and is restarted`);
    const checkpoint = latestCheckpoint(join(this.runDir, 'checkpoints')) ?? this.options.resumeFrom;
    const lastStep = [...this.events].reverse().find((e) => e.type === 'step');
    const at = lastStep?.type === 'step' ? ` after step ${lastStep.step}` : '';
    const how = code === null ? 'was killed' : `exited with code ${code}`;
    const from = checkpoint ? `checkpoint ${basename(checkpoint)}` : 'the first step (no checkpoint was written yet)';
    this.log('warn', 'coordinator', null, `The coordinator ${how}${at}; restarting it from ${from} (restart ${this.restarts} of at most ${this.options.coordinatorRestarts ?? MAX_RESTARTS}).`);
    this.emit({ type: 'status', state: 'starting', message: `restarting the coordinator from ${from}`, time: Date.now() });
    await this.processes.killNow();
    if (this.stopping) return;
    try {
      const { plan, model, agents } = this.options;
      await this.startCoordinator(secret, { team: teamAfterRestart(plan, model, agents, this.events), resumeFrom: checkpoint });
    } catch (err) {
      this.fail(`The coordinator could not be restarted: ${(err as Error).message}`);
    }
  }

  /** What every coordinator of this job is told (set when the job starts). */
  private spec: JobSpec | null = null;

  private jobSpec(steps: number): JobSpec {
    const { model, plan, training, agents, checkpointEverySteps, resumeFrom, evalEverySteps } = this.options;
    return { jobId: this.id, model, plan, training, agents, steps, evalEverySteps: evalEverySteps ?? defaultEvalEvery(plan, training), checkpointEverySteps, resumeFrom, tuning: tuningOf(this.options) };
  }

  private coordinator: { port: number; secret: string; bundle: string } | null = null;
  private coordinatorProcess: StartedProcess | null = null;
  /** Which coordinator is current: processes of an earlier one that crashed are ignored when they exit. */
  private coordinatorEpoch = 0;
  private restarts = 0;
  private resolveFinal: (event: FinalEvent) => void = () => {};

  /** The process id of the current coordinator (tests kill it to check the recovery). */
  get coordinatorPid(): number | undefined {
    return this.coordinatorProcess?.child.pid;
  }

  private agentsStarted = 0;

  private spawnAgent(): void {
    const { port, secret, bundle } = this.coordinator!;
    const index = this.agentsStarted++;
    const host = `local-${index}`;
    const slowdown = this.options.agentSlowdowns?.[index];
    const coordinatorOf = this.coordinatorProcess;
    const recent: string[] = [];
    const agent = startAgentProcess(bundle, 'agent', agentConfig(secret, { host: '127.0.0.1', port }, '127.0.0.1', host, slowdown), (line) => {
      // Agents write to stderr only what they cannot send to the coordinator: start-up and crashes.
      recent.push(line);
      if (recent.length > 5) recent.shift();
      this.log('info', host, null, line);
    });
    this.processes.add(agent);
    agent.child.once('exit', (code, signal) => {
      if (code === 0 || this.stopping || this.state === 'finished' || this.state === 'failed') return;
      // Agents end with their coordinator: when it has gone, its exit is what counts (see startCoordinator).
      if (!coordinatorOf || coordinatorOf !== this.coordinatorProcess || hasExited(coordinatorOf)) return;
      const placed = this.events.find((e) => e.type === 'agent' && e.pid === agent.child.pid);
      const who = placed?.type === 'agent' ? `Agent rank ${placed.rank} on ${host}` : `Agent ${host}`;
      const how = signal ? `was killed by ${signal}` : `exited with code ${code}`;
      const message = `${who} (pid ${agent.child.pid}) ${how} while the job was ${this.state}.${recent.length ? ` Its last output: ${recent.join(' | ')}` : ''}`;
      // Once running, a lost agent is the coordinator's to handle (it goes on without it, or fails the job).
      if (this.state === 'running') this.log('warn', host, null, message);
      else this.fail(message);
    });
  }

  /**
   * Change the job's agents without a restart: start `add` more agent processes here and/or release
   * the agents holding ranks `remove` (resizeJob.ts). Resolves once the coordinator has applied it, at
   * the next step boundary (a `membership` event). Its agents are children of this process, so it
   * takes no agents on other hosts.
   */
  async resize(request: ResizeRequest & { hosts?: string[] }): Promise<void> {
    if (request.hosts?.length) throw new Error(`Job ${this.id} runs on this machine: it takes agents here only (add), not on hosts.`);
    if (!this.coordinator || this.state !== 'running') throw new Error(`Job ${this.id} is ${this.state}; only a running job can be resized.`);
    checkResizable(this.id, this.options.plan.schedule);
    const { port, secret } = this.coordinator;
    await resizeJob(
      {
        jobId: this.id,
        at: { host: '127.0.0.1', port, secret },
        // This process already follows the job: its own events, from now on.
        events: async (onEvent, onEnd) => {
          const follower = { onEvent, onEnd };
          this.followers.add(follower);
          return () => this.followers.delete(follower);
        },
        current: () => [...this.events].reverse().find((e): e is Extract<JobEvent, { type: 'membership' }> => e.type === 'membership'),
        startAgents: async (add) => {
          for (let i = 0; i < add; i++) this.spawnAgent();
        },
      },
      request,
    );
  }

  /** Resizes waiting for their generation; a coordinator restarted under them ends their wait. */
  private readonly followers = new Set<{ onEvent: (e: JobEvent) => void; onEnd: (reason: string) => void }>();

  private failWith: (err: Error) => void = () => {};

  private fail(message: string): void {
    if (this.state === 'failed' || this.state === 'finished') return;
    this.emit({ type: 'status', state: 'failed', message, time: Date.now() });
    this.failWith(new Error(message));
    this.kill();
  }

  /** Attach to the coordinator's event stream as a studio client; its final event ends the job. */
  private async attach(port: number, secret: string, epoch: number): Promise<void> {
    const coordinator = this.coordinatorProcess;
    const onEvent = (event: JobEvent) => {
      if (event.type === 'status' && event.state === 'starting' && this.events.some((e) => e.type === 'status')) return;
      this.emit(event);
      if (event.type === 'final') this.resolveFinal(event);
      if (event.type === 'status' && event.state === 'failed') {
        this.failWith(new Error(event.message ?? 'The job failed.'));
        this.kill();
      }
    };
    await followEvents({ host: '127.0.0.1', port, secret }, onEvent, () => {
      // A coordinator that exits closes the connection first; its exit decides (a restart or a
      // failure). Only a connection lost while the coordinator still runs fails the job here.
      setTimeout(() => {
        const current = epoch === this.coordinatorEpoch && coordinator && !hasExited(coordinator);
        if (current && this.state !== 'finished' && !this.stopping) this.fail('Lost the connection to the coordinator.');
      }, 3000).unref();
    });
  }

  /** Stop the job: every process of it is killed. */
  async stop(): Promise<void> {
    if (this.state === 'finished' || this.state === 'failed' || this.state === 'stopped') {
      // Nothing to stop, but an agent fenced while stopped (SIGSTOP) may still be there: end it now,
      // rather than leave it to a timer that a closing studio or CLI may not outlive.
      this.kill();
      await this.processes.exited();
      return;
    }
    this.stopping = true;
    removeControlFile(this.runDir);
    this.emit({ type: 'status', state: 'stopped', message: 'stopped by the user', time: Date.now() });
    this.failWith(new Error('The job was stopped.'));
    this.kill();
    await this.processes.exited();
  }

  private kill(): void {
    this.processes.end();
  }

  /** Wait until every process of the job has exited (after `done`). */
  async exited(): Promise<void> {
    await this.processes.exited();
  }
}
