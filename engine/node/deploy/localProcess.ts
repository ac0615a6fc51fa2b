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
