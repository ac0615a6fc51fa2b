import { spawn, type ChildProcess } from 'node:child_process';
import { createInterface } from 'node:readline';
import { MAX_RESTARTS, restartsAfterExit } from '../../plan/restartPolicy.js';

export interface SupervisedOptions {
  bundle: string;
  role: 'coordinator' | 'agent';
  /** Written to the process's standard input (it carries the job secret). */
  config: unknown;
  /** Added to this process's environment (an agent's CUDA_VISIBLE_DEVICES). */
  env?: Record<string, string>;
  /** The working directory: a coordinator keeps its port file there for a restart (agents/coordinator/restart.ts). */
  cwd: string;
  /** At most this many restarts (default: the restart policy's). */
  maxRestarts?: number;
  onStdout(line: string): void;
  onStderr(line: string): void;
  /** After every exit: whether the supervisor starts the process again. */
  onExit(exit: ProcessExit): void;
}

export interface ProcessExit {
  /** Null when a signal ended it. */
  code: number | null;
  signal: NodeJS.Signals | null;
  restarting: boolean;
  /** Restarts done so far, this one included when `restarting`. */
  restarts: number;
}

/** How long a supervisor waits before starting a process again (as the sh supervisor's `sleep 1`). */
const RESTART_PAUSE_MS = 1000;

/**
 * One process of a job kept as a child of this one, under the same supervision as a detached
 * process on a host (the sh loop of engine/node/deploy/jobScripts.ts): started again after an exit
 * that engine/plan/restartPolicy.ts says to restart, with SHOAL_SUPERVISED=1 and SHOAL_RESTART=n so
 * that it knows — a coordinator resumes from its newest checkpoint on the same port, an agent rejoins.
 */
export class SupervisedProcess {
  private child: ChildProcess | null = null;
  private restarts = 0;
  private ended = false;
  private resolveDone!: () => void;
  /** Resolves once the process has exited for good (no restart follows). */
  readonly done = new Promise<void>((resolve) => (this.resolveDone = resolve));

  constructor(private readonly o: SupervisedOptions) {
    this.spawnOnce();
  }

  /** The current process's id (a restart changes it). */
  get pid(): number | undefined {
    return this.child?.pid;
  }

  /** The supervisor has not given up: the process runs, or a restart is on its way. */
  get alive(): boolean {
    return this.child !== null;
  }

  exitCode: number | null = null;

  private spawnOnce(): void {
    const child = spawn(process.execPath, [this.o.bundle, this.o.role], {
      cwd: this.o.cwd,
      stdio: ['pipe', 'pipe', 'pipe'],
      // SHOAL_OWNER_PID: the coordinator stops the job (with a checkpoint) should this owner die unannounced.
      env: { ...process.env, ...this.o.env, ELECTRON_RUN_AS_NODE: '1', SHOAL_SUPERVISED: '1', SHOAL_RESTART: String(this.restarts), SHOAL_OWNER_PID: String(process.pid) },
    });
    this.child = child;
    child.stdin!.on('error', () => {}); // a process that dies at once closes its stdin under us
    child.stdin!.end(JSON.stringify(this.o.config) + '\n');
    createInterface({ input: child.stdout! }).on('line', (l) => this.o.onStdout(l));
    createInterface({ input: child.stderr! }).on('line', (l) => this.o.onStderr(l));
    child.once('exit', (code, signal) => {
      const restarting = !this.ended && restartsAfterExit(this.o.role, code, this.restarts, this.o.maxRestarts ?? MAX_RESTARTS);
      if (restarting) this.restarts++;
      this.o.onExit({ code, signal, restarting, restarts: this.restarts });
      if (restarting) {
        setTimeout(() => (this.ended ? this.finish(code) : this.spawnOnce()), RESTART_PAUSE_MS).unref();
      } else this.finish(code);
    });
    child.once('error', () => {}); // 'exit' follows and reports it
  }

  private finish(code: number | null): void {
    this.child = null;
    this.exitCode = code;
    this.resolveDone();
  }

  /**
   * No more restarts; SIGTERM now (with SIGCONT, so that a stopped process acts on it at once) and
   * SIGKILL after `graceMs` for a process still there.
   */
  end(graceMs = 2000): void {
    this.ended = true;
    const child = this.child;
    if (!child || child.exitCode !== null || child.signalCode !== null) return;
    child.kill('SIGTERM');
    child.kill('SIGCONT');
    if (graceMs === 0) child.kill('SIGKILL');
    else setTimeout(() => child.exitCode === null && child.signalCode === null && child.kill('SIGKILL'), graceMs).unref();
  }
}
