import type { Plan } from '../plan/plan.js';
import type { DeployStatus } from '../protocol/deploy.js';
import type { JobEvent, JobState } from '../protocol/events.js';
import type { JobSummary } from '../protocol/studioApi.js';
import { summarizeJob } from './commands/jobs.js';
import type { Launcher } from './deploy/launcher.js';
import { DeployProgress } from './deployProgress.js';
import type { HostKeyQuestions } from './hosts/hostKeyQuestions.js';
import { attachJob } from './jobs/attachJob.js';
import { DeployError, deployJob, type DeployOptions } from './jobs/deployJob.js';
import type { DeployRecord } from './jobs/deployRecord.js';
import { resizeDeployedJob, type HostAgents } from './jobs/resizeDeployedJob.js';
import { checkResizable } from './jobs/resizeJob.js';
import type { StudioJob } from './jobs/studioJob.js';
import { stopDeployedJob } from './jobs/stopDeployedJob.js';

export interface DeployedJobFacts {
  model: string;
  /** Agent processes of the plan. */
  agents: number;
  schedule: Plan['schedule'];
  /** The stored cluster's name, or `local`. */
  cluster: string;
  startedAt: number;
}

const active = (state: JobState) => state === 'starting' || state === 'running';

/**
 * A deployed job as the studio holds it (a StudioJob, as a LocalJob is): deploy (per-host progress, host-key questions) or re-attach, then follow the
 * coordinator's event stream — history first — into `events` and to the studio's listeners. The job's
 * processes are detached: closing the studio only stops following (detach), never the job.
 */
export class DeployedStudioJob implements StudioJob {
  readonly events: JobEvent[] = [];
  state: JobState = 'starting';
  phase: DeployStatus['phase'] = 'preparing';
  error?: string;
  runDir = '';
  private record?: DeployRecord;
  private readonly progress: DeployProgress;
  private readonly abort = new AbortController();
  private following: Promise<void> = Promise.resolve();
  private stopRequested = false;

  constructor(
    readonly id: string,
    readonly facts: DeployedJobFacts,
    private readonly launcher: Launcher,
    readonly questions: HostKeyQuestions,
    /** Each event with its index in the job's history (`events`). */
    private readonly onEvent: (event: JobEvent, index: number) => void,
  ) {
    this.progress = new DeployProgress(launcher.targets.map((t) => t.alias));
  }

  get startedAt(): number {
    return this.facts.startedAt;
  }

  /** Prepare every host, start the job detached, then follow it. Failures end up in status(), never thrown. */
  async deploy(options: Omit<DeployOptions, 'launcher' | 'onProgress' | 'jobId'>): Promise<void> {
    let deployed: { record: DeployRecord; runDir: string };
    try {
      deployed = await deployJob({
        ...options,
        launcher: this.launcher,
        jobId: this.id,
        onProgress: (e) => {
          this.progress.update(e);
          if (this.phase === 'preparing' && this.progress.view().every((h) => h.ok)) this.phase = 'starting';
        },
      });
    } catch (err) {
      if (err instanceof DeployError) this.progress.settle(err.prepared);
      if (this.stopRequested) return this.end('stopped', `Deploy of ${this.id} stopped from the studio before the job started.`);
      return this.end('failed', (err as Error).message);
    }
    this.record = deployed.record;
    this.runDir = deployed.runDir;
    // The studio closed while the job started: it runs on, unfollowed; no session is left open.
    if (this.abort.signal.aborted) return this.launcher.close();
    if (this.stopRequested) {
      // Stop was pressed while the hosts were being prepared: the processes just started go again.
      await this.launcher.stop(this.id).catch(() => []);
      return this.end('stopped', `Job ${this.id} stopped from the studio as it started.`);
    }
    this.phase = 'following';
    await this.follow(deployed.record);
  }

  /** Follow a job deployed earlier (found in its run folder): the whole history, then live events. */
  async attach(record: DeployRecord, runDir: string): Promise<void> {
    this.record = record;
    this.runDir = runDir;
    this.phase = 'attaching';
    await this.follow(record);
  }

  private follow(record: DeployRecord): Promise<void> {
    this.following = (async () => {
      try {
        const result = await attachJob(
          this.launcher,
          record,
          (e) => {
            if (this.phase === 'attaching') this.phase = 'following';
            this.push(this.stopRequested ? afterStop(e, record.head) : e);
          },
          { follow: true, signal: this.abort.signal },
        );
        // Stopped from here: stop() says so once the processes are gone (their exit codes would read as a failure).
        if (this.abort.signal.aborted || this.stopRequested) return;
        if (this.phase === 'attaching') this.phase = 'following';
        if (!result.ended && active(this.state)) await this.askHosts(record);
      } catch (err) {
        if (!this.abort.signal.aborted && !this.stopRequested) this.end('failed', `Cannot follow job ${this.id}: ${(err as Error).message}`);
      }
    })();
    return this.following;
  }

  /** The stream ended without the job's end: its hosts say what became of it. */
  private async askHosts(record: DeployRecord): Promise<void> {
    const summary = summarizeJob(record, await this.launcher.status(record.jobId));
    if (summary.state === 'finished' || summary.state === 'stopped' || summary.state === 'failed') return this.end(summary.state, `Job ${this.id} ${summary.state} (${summary.detail}).`);
    this.phase = 'detached';
    this.error = `Lost the connection to job ${this.id} on ${record.head} (${summary.state}: ${summary.detail}). Open it again from Jobs on clusters to re-attach.`;
    this.push({ type: 'log', level: 'warn', host: record.head, rank: null, message: this.error, time: Date.now() });
  }

  private end(state: 'failed' | 'stopped' | 'finished', message: string): void {
    if (state !== 'finished') {
      this.phase = state === 'failed' ? 'failed' : 'detached';
      this.error = message;
    }
    if (active(this.state)) this.push({ type: 'status', state, message, time: Date.now() });
  }

  private push(event: JobEvent): void {
    if (event.type === 'status') this.state = event.state;
    if (event.type === 'final') this.state = 'finished';
    this.events.push(event);
    this.onEvent(event, this.events.length - 1);
  }

  /** A deployed job always stops as `shoal stop` does, with a checkpoint; closing the studio only detaches. */
  stopWithCheckpoint(): Promise<void> {
    return this.stop();
  }

  /** Stop the job with a checkpoint (as `shoal stop`); errors name the hosts that could not be reached. */
  async stop(): Promise<void> {
    this.stopRequested = true;
    if (!this.record) {
      // Still preparing: closing the SSH sessions fails what is in flight; deploy() then reports stopped.
      this.questions.refuseAll();
      this.launcher.close();
      return;
    }
    // As `shoal stop`: the coordinator saves a checkpoint and ends the job, then what is left is killed.
    const { outcomes } = await stopDeployedJob(this.launcher, this.record);
    // The coordinator is gone: following ends (with the `stopped` line appended to the history, if read).
    await this.following;
    const failed = outcomes.filter((o) => !o.ok);
    this.end('stopped', failed.length ? `Job ${this.id} stopped on ${outcomes.length - failed.length} of ${outcomes.length} hosts.` : `Job ${this.id} stopped from the studio.`);
    if (failed.length) {
      throw new Error(`Job ${this.id} could not be stopped on ${failed.map((f) => f.target).join(', ')}: ${failed.map((f) => f.error).join('; ')}. Press Stop again once they can be reached, or run shoal stop ${this.id}.`);
    }
  }

  /**
   * Resize the running job from the studio, as `shoal resize` does: `add` agents go on the hosts named,
   * or spread over the job's hosts (fewest agents first); `remove` releases ranks. Resolves once the
   * coordinator has applied it (a `membership` event).
   */
  async resize(request: { add?: number; remove?: number[]; hosts?: string[] }): Promise<void> {
    if (!this.record || this.state !== 'running') throw new Error(`Job ${this.id} is ${this.state}; only a running job can be resized.`);
    checkResizable(this.id, this.facts.schedule);
    const add = request.hosts?.length ? request.hosts.map((host) => ({ host, count: 1 })) : spreadAgents(this.record, request.add ?? 0);
    await resizeDeployedJob(this.record, this.runDir, { add, remove: request.remove ?? [] }, { trustRequest: this.questions.ask });
  }

  /** Stop following (the studio is closing): the job goes on, unknown host keys are refused. */
  detach(): void {
    this.abort.abort();
    this.questions.refuseAll();
    this.launcher.close();
  }

  /** Whether this studio still follows the job's events (or is about to). */
  get attached(): boolean {
    return !this.abort.signal.aborted && active(this.state) && (this.phase === 'preparing' || this.phase === 'starting' || this.phase === 'attaching' || this.phase === 'following');
  }

  status(): DeployStatus {
    return {
      jobId: this.id,
      cluster: this.facts.cluster,
      phase: this.phase,
      hosts: this.progress.view(),
      trust: this.questions.prompts(),
      ...(this.error ? { error: this.error } : {}),
    };
  }

  summary(): JobSummary {
    const f = this.facts;
    return { id: this.id, model: f.model, state: this.state, startedAt: f.startedAt, agents: f.agents, events: this.events.length, schedule: f.schedule };
  }
}

/**
 * An event the job sent after Stop was pressed: a failure then is a process that saw another one
 * stopped before it — a consequence of Stop, kept as a log line rather than the job's end.
 */
function afterStop(event: JobEvent, head: string): JobEvent {
  if (event.type !== 'status' || event.state !== 'failed') return event;
  return { type: 'log', level: 'warn', host: head, rank: null, message: `While stopping: ${event.message ?? 'the job reported a failure'}`, time: event.time };
}

/**
 * Where `n` new agents of a deployed job go when no host is named: this machine for a local deploy,
 * the head when the coordinator listens on loopback there, else one by one onto the job's host with
 * the fewest agents (round-robin, head first on ties).
 */
export function spreadAgents(record: DeployRecord, n: number): HostAgents[] {
  if (n <= 0) return [];
  if (record.launcher === 'local') return [{ host: 'local', count: n }];
  if (record.coordinator.listenHost === '127.0.0.1') return [{ host: record.head, count: n }];
  const load = new Map(record.hosts.map((h) => [h.alias, record.processes.filter((p) => p.role === 'agent' && p.target === h.alias).length]));
  const placed = new Map<string, number>();
  for (let i = 0; i < n; i++) {
    const [host] = [...load].sort((a, b) => a[1] - b[1])[0];
    load.set(host, load.get(host)! + 1);
    placed.set(host, (placed.get(host) ?? 0) + 1);
  }
  return [...placed].map(([host, count]) => ({ host, count }));
}
