import { basename, join } from 'node:path';
import type { JobEvent, JobState } from '../../protocol/events.js';
import type { ProcessExit } from '../deploy/supervisedProcess.js';
import { removeControlFile } from './controlFile.js';
import type { JobEventLog } from './jobEventLog.js';
import { releaseRunLock } from './runLock.js';
import { latestCheckpoint } from './runStore.js';

/** What the exit handling needs of its LocalJob. */
export interface ExitingJob {
  readonly runDir: string;
  readonly journal: JobEventLog;
  /** The job is stopping or over: its processes' exits are expected now. */
  ended(): boolean;
  fail(message: string): void;
  /** End whatever processes of the job are left. */
  endProcesses(): void;
  /** How a process is known in events and logs. */
  hostOf(name: string): string;
}

/**
 * How a LocalJob answers its processes' output and exits (its LocalLauncher reports both): a
 * coordinator its supervisor restarts resumes from the newest checkpoint and the agents rejoin it; a
 * coordinator gone for good fails the job, saying how to resume it; an agent that dies unexpectedly
 * fails a starting job, with its last output, and is the coordinator's to handle once it runs.
 */
export class LocalJobExits {
  /** Between a coordinator's crash and its successor's first word: agents that exit then end with it. */
  private coordinatorDown = false;
  private readonly recentOutput = new RecentOutput();

  constructor(
    private readonly job: ExitingJob,
    private readonly restarts: { resumeFrom?: string; max: number },
  ) {}

  /** The coordinator said something: it is up. */
  coordinatorSpoke(): void {
    this.coordinatorDown = false;
  }

  onOutput(name: string, line: string): void {
    // The coordinator's own log lines reach us as events; an agent writes to stderr only what it cannot
    // send to the coordinator: start-up and crashes.
    if (name === 'coordinator') return;
    this.recentOutput.add(name, line);
    this.job.journal.log('info', this.job.hostOf(name), null, line);
  }

  onCoordinatorExit(exit: ProcessExit): void {
    const { job } = this;
    if (exit.restarting && !job.ended()) {
      // Its supervisor starts it again: it resumes from the newest checkpoint, and the agents rejoin.
      this.coordinatorDown = true;
      const notice = coordinatorRestartNotice({ exit, runDir: job.runDir, resumeFrom: this.restarts.resumeFrom, lastStep: job.journal.latest('step')?.step, maxRestarts: this.restarts.max });
      job.journal.endFollowers(notice.reason);
      job.journal.log('warn', 'coordinator', null, notice.warning);
      job.journal.emit({ type: 'status', state: 'starting', message: notice.status, time: Date.now() });
      return;
    }
    if (exit.restarting) return;
    removeControlFile(job.runDir);
    // The coordinator (the one writer of events and checkpoints there) is gone: the folder is free.
    releaseRunLock(job.runDir);
    if (job.ended()) {
      // Agents exit when the coordinator tells them or goes away; one that was fenced while stopped
      // (SIGSTOP) cannot notice, so whatever is left is ended.
      setTimeout(() => job.endProcesses(), 1000).unref();
      return;
    }
    job.fail(coordinatorGoneMessage(exit, job.runDir, job.journal.state));
  }

  onAgentExit(name: string, exit: ProcessExit, pid: number | undefined): void {
    const { job } = this;
    // A clean exit, one its supervisor answers with a restart (it rejoins a restarted coordinator), and
    // any exit once the job has ended or while its coordinator is down (agents end with it) are expected.
    if (exit.code === 0 || exit.restarting || job.ended() || this.coordinatorDown) return;
    const host = job.hostOf(name);
    const { events, state } = job.journal;
    const message = agentExitMessage({ host, pid, exit, events, state, lastOutput: this.recentOutput.of(name) });
    // Once running, a lost agent is the coordinator's to handle (it goes on without it, or fails the job).
    if (state === 'running') job.journal.log('warn', host, null, message);
    else job.fail(message);
  }
}

const coordinatorHow = (exit: ProcessExit) => (exit.code === null ? 'was killed' : `exited with code ${exit.code}`);

/** Its supervisor restarts the coordinator: the followers' reason, a warning and the status message, each saying where it resumes from. */
function coordinatorRestartNotice(o: { exit: ProcessExit; runDir: string; resumeFrom?: string; lastStep?: number; maxRestarts: number }): {
  reason: string;
  warning: string;
  status: string;
} {
  const how = coordinatorHow(o.exit);
  const checkpoint = latestCheckpoint(join(o.runDir, 'checkpoints')) ?? o.resumeFrom;
  const at = o.lastStep === undefined ? '' : ` after step ${o.lastStep}`;
  const from = checkpoint ? `checkpoint ${basename(checkpoint)}` : 'the first step (no checkpoint was written yet)';
  return {
    reason: `the coordinator ${how} and is restarted`,
    warning: `The coordinator ${how}${at}; restarting it from ${from} (restart ${o.exit.restarts} of at most ${o.maxRestarts}).`,
    status: `restarting the coordinator from ${from}`,
  };
}

/** The coordinator is gone for good while the job ran: why the job failed, and how to continue it. */
function coordinatorGoneMessage(exit: ProcessExit, runDir: string, state: JobState): string {
  const restarted = exit.restarts > 0 ? ` after ${exit.restarts} restart${exit.restarts === 1 ? '' : 's'}` : '';
  const newest = latestCheckpoint(join(runDir, 'checkpoints'));
  const wayBack = newest
    ? ` \`shoal resume ${runDir}\` continues it from its newest checkpoint, ${basename(newest)}.`
    : ' It wrote no checkpoint, so it has to start again (--checkpoint-every N saves them as it goes).';
  return `The coordinator ${coordinatorHow(exit)} while the job was ${state}${restarted}.${wayBack}`;
}

/** An agent died unexpectedly: which rank it held, how it ended, and its last output. */
function agentExitMessage(o: { host: string; pid: number | undefined; exit: ProcessExit; events: readonly JobEvent[]; state: JobState; lastOutput: string[] }): string {
  const placed = o.events.find((e) => e.type === 'agent' && e.pid === o.pid);
  const who = placed?.type === 'agent' ? `Agent rank ${placed.rank} on ${o.host}` : `Agent ${o.host}`;
  const how = o.exit.signal ? `was killed by ${o.exit.signal}` : `exited with code ${o.exit.code}`;
  const said = o.lastOutput.length ? ` Its last output: ${o.lastOutput.join(' | ')}` : '';
  return `${who} (pid ${o.pid}) ${how} while the job was ${o.state}.${said}`;
}

/** The last few lines each process wrote, to say why one died. */
class RecentOutput {
  private readonly lines = new Map<string, string[]>();

  constructor(private readonly keep = 5) {}

  add(name: string, line: string): void {
    const recent = this.lines.get(name) ?? [];
    recent.push(line);
    if (recent.length > this.keep) recent.shift();
    this.lines.set(name, recent);
  }

  of(name: string): string[] {
    return this.lines.get(name) ?? [];
  }
}
