import { spawn, type ChildProcess } from 'node:child_process';
import { createInterface } from 'node:readline';

export interface StartedProcess {
  child: ChildProcess;
  /** Resolves with the exit code (or null when killed by a signal). */
  exited: Promise<number | null>;
}

/**
 * Start `node <bundle> <role>` with its configuration (secret included) written to standard input.
 * Each line the process writes to stderr is handed to `onLog`; stdout lines to `onStdout`.
 */
export function startAgentProcess(
  bundle: string,
  role: 'agent' | 'coordinator',
  config: unknown,
  onLog: (line: string) => void,
  onStdout: (line: string) => void = onLog,
): StartedProcess {
  const child = spawn(process.execPath, [bundle, role], { stdio: ['pipe', 'pipe', 'pipe'], env: { ...process.env, ELECTRON_RUN_AS_NODE: '1' } });
  child.stdin!.end(JSON.stringify(config) + '\n');
  createInterface({ input: child.stdout! }).on('line', onStdout);
  createInterface({ input: child.stderr! }).on('line', onLog);
  const exited = new Promise<number | null>((resolve) => child.once('exit', (code) => resolve(code)));
  return { child, exited };
}

export const hasExited = (p: StartedProcess): boolean => p.child.exitCode !== null || p.child.signalCode !== null;

/**
 * The processes of a job that are this process's children (`shoal train`, the studio's Train): they
 * end with it, unlike a launcher's detached ones.
 */
export class ChildProcesses {
  private readonly all: StartedProcess[] = [];

  add(p: StartedProcess): StartedProcess {
    this.all.push(p);
    return p;
  }

  alive(): StartedProcess[] {
    return this.all.filter((p) => !hasExited(p));
  }

  /**
   * SIGTERM first, with SIGCONT so that a stopped (SIGSTOP) process acts on it now; SIGKILL after a
   * grace period for anything still there.
   */
  end(): void {
    for (const p of this.alive()) {
      p.child.kill('SIGTERM');
      p.child.kill('SIGCONT');
    }
    setTimeout(() => this.alive().forEach((p) => p.child.kill('SIGKILL')), 2000).unref();
  }

  /** SIGKILL whatever is left (a crashed coordinator's agents) and wait for it to go. */
  async killNow(): Promise<void> {
    const left = this.alive();
    for (const p of left) p.child.kill('SIGKILL');
    await Promise.all(left.map((p) => p.exited));
  }

  /** Resolves once every process started so far has exited. */
  async exited(): Promise<void> {
    await Promise.all(this.all.map((p) => p.exited));
  }
}
