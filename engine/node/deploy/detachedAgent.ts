import { spawn, type ChildProcess } from 'node:child_process';
import { closeSync, openSync } from 'node:fs';

export interface DetachedAgent {
  child: ChildProcess;
  logFile: string;
  /** Resolves with the exit code (or the signal) if the agent ends while this process still watches. */
  exited: Promise<{ code: number | null; signal: NodeJS.Signals | null }>;
  /** Stop watching: the agent lives on without this process. */
  release(): void;
}

/**
 * Start `node <bundle> agent` in its own session, so that it outlives the process that started it
 * (`shoal resize`). Its configuration — the job secret included — goes through standard input, never
 * the command line or the environment; what it writes to stdout and stderr goes to `logFile`.
 */
export function startDetachedAgent(bundle: string, config: Record<string, unknown>, logFile: string): DetachedAgent {
  const log = openSync(logFile, 'a', 0o600);
  let child: ChildProcess;
  try {
    child = spawn(process.execPath, [bundle, 'agent'], { detached: true, stdio: ['pipe', log, log], env: { ...process.env, ELECTRON_RUN_AS_NODE: '1' } });
  } finally {
    closeSync(log);
  }
  child.stdin!.on('error', () => {}); // an agent that dies at once is reported through `exited`
  child.stdin!.end(JSON.stringify(config) + '\n');
  const exited = new Promise<{ code: number | null; signal: NodeJS.Signals | null }>((resolve) => child.once('exit', (code, signal) => resolve({ code, signal })));
  return {
    child,
    logFile,
    exited,
    release: () => {
      child.stdin?.destroy();
      child.unref();
    },
  };
}
