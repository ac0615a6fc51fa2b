import { existsSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import type { ProcessSpec, StartedProcess, TargetJobState, TargetOutcome } from './launcher.js';
import { SupervisedProcess, type ProcessExit } from './supervisedProcess.js';

/** How a job whose processes are this process's children is run (LocalLauncher's attached mode). */
export interface AttachedMode {
  /** The job's run folder on this machine: the coordinator's working directory (events, checkpoints, port file). */
  runDir: string;
  /** Restarts of a crashed coordinator (default: the restart policy's; 0 = never). */
  coordinatorRestarts?: number;
  /** A line a process wrote: a coordinator's stdout carries `{"listening":port}`, stderr what it could not send. */
  onOutput?(name: string, line: string): void;
  /** A process exited (`restarting`: its supervisor starts it again). */
  onExit?(name: string, role: ProcessSpec['role'], exit: ProcessExit, pid: number | undefined): void;
}

const TARGET = 'localhost';

/**
 * The processes of one job kept as children of this process (`shoal train`, the studio's Train):
 * each under a SupervisedProcess with the same restart policy as a detached one on a host, and all
 * ended with their owner. What a host keeps in files (pids, exit codes, configs) is kept in memory.
 */
export class AttachedProcesses {
  private readonly processes = new Map<string, { spec: ProcessSpec; process: SupervisedProcess }>();

  constructor(private readonly mode: AttachedMode) {}

  start(bundle: string, spec: ProcessSpec): Promise<StartedProcess> {
    const { mode } = this;
    let listening: (port: number) => void = () => {};
    let notListening: (err: Error) => void = () => {};
    const port = new Promise<number>((resolve, reject) => ((listening = resolve), (notListening = reject)));
    port.catch(() => {}); // only a coordinator's start waits for it
    const recent: string[] = [];
    const supervised = new SupervisedProcess({
      bundle,
      role: spec.role,
      config: spec.config,
      ...(spec.env ? { env: spec.env } : {}),
      cwd: mode.runDir,
      ...(spec.role === 'coordinator' && mode.coordinatorRestarts !== undefined ? { maxRestarts: mode.coordinatorRestarts } : {}),
      onStdout: (line) => {
        const announced = listeningPort(line);
        if (announced !== undefined) return listening(announced);
        mode.onOutput?.(spec.name, line);
      },
      onStderr: (line) => {
        recent.push(line);
        if (recent.length > 20) recent.shift();
        mode.onOutput?.(spec.name, line);
      },
      onExit: (exit) => {
        notListening(new Error(`The ${spec.role} exited (code ${exit.code ?? exit.signal}) before it started listening.${recent.length ? ` Its last output: ${recent.slice(-5).join(' | ')}` : ''}`));
        mode.onExit?.(spec.name, spec.role, exit, supervised.pid);
      },
    });
    this.processes.set(spec.name, { spec, process: supervised });
    const started = { target: TARGET, name: spec.name, role: spec.role, pid: supervised.pid ?? 0 };
    if (spec.role !== 'coordinator') return Promise.resolve(started);
    return port.then((p) => ({ ...started, port: p }));
  }

  /** The current process id of `name` (a restart changes it). */
  pidOf(name: string): number | undefined {
    return this.processes.get(name)?.process.pid;
  }

  readJobFile(where: 'run' | 'temp', file: string): string | undefined {
    if (where === 'run') {
      const path = join(this.mode.runDir, file);
      return existsSync(path) ? readFileSync(path, 'utf8') : undefined;
    }
    // A host keeps `<name>.config` while the process is supervised; here it is the spec in memory.
    const name = file.endsWith('.config') ? file.slice(0, -'.config'.length) : '';
    const held = this.processes.get(name);
    return held?.process.alive ? JSON.stringify(held.spec.config) : undefined;
  }

  status(): TargetJobState {
    const processes = [...this.processes.values()].map(({ spec, process }) => ({
      name: spec.name,
      pid: process.pid ?? 0,
      alive: process.alive,
      ...(process.exitCode === null ? {} : { exitCode: process.exitCode }),
    }));
    return { target: TARGET, ok: true, present: processes.some((p) => p.alive), processes };
  }

  /** The coordinator first (up to 1 s), so that it does not record the agents' ends as a failure; then the rest. */
  async stop(): Promise<TargetOutcome> {
    const coordinator = this.processes.get('coordinator')?.process;
    if (coordinator) {
      coordinator.end();
      await Promise.race([coordinator.done, new Promise((r) => setTimeout(r, 1000).unref())]);
    }
    this.end();
    await this.exited();
    return { target: TARGET, ok: true };
  }

  /** No more restarts; every process is ended (SIGTERM, SIGKILL after a grace period). */
  end(graceMs?: number): void {
    for (const { process } of this.processes.values()) process.end(graceMs);
  }

  /** Resolves once every process started so far has exited for good. */
  async exited(): Promise<void> {
    await Promise.all([...this.processes.values()].map(({ process }) => process.done));
  }
}

function listeningPort(line: string): number | undefined {
  if (!line.startsWith('{')) return undefined;
  try {
    const port = (JSON.parse(line) as { listening?: unknown }).listening;
    return typeof port === 'number' ? port : undefined;
  } catch {
    return undefined;
  }
}
