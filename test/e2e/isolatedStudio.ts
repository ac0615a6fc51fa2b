import { spawn } from 'node:child_process';
import type { ChildProcess } from 'node:child_process';

/**
 * A browser shell of its own, with its own SHOAL_DATA_DIR (and config directory), for tests whose
 * subject is what is on disk (runs, clusters): `node dist/launch.cjs --web --port 0`, as `npm start`.
 */
export interface IsolatedStudio {
  url: string;
  close(): Promise<void>;
}

const URL_PATTERN = /(http:\/\/127\.0\.0\.1:\d+)\/#token=([A-Za-z0-9_-]+)/;

export async function launchIsolatedStudio(env: Record<string, string>): Promise<IsolatedStudio> {
  const child: ChildProcess = spawn(process.execPath, ['dist/launch.cjs', '--web', '--port', '0'], { cwd: process.cwd(), stdio: ['ignore', 'pipe', 'pipe'], env: { ...process.env, ...env } });
  let output = '';
  const url = await new Promise<string>((resolve, reject) => {
    const onData = (chunk: Buffer) => {
      output += chunk.toString();
      const match = URL_PATTERN.exec(output);
      if (match) resolve(match[0]);
    };
    child.stdout?.on('data', onData);
    child.stderr?.on('data', onData);
    child.once('exit', (code) => reject(new Error(`The studio exited (code ${code}) before printing its URL:\n${output}`)));
    setTimeout(() => reject(new Error(`The studio printed no URL within 30 s:\n${output}`)), 30_000);
  });
  return {
    url,
    async close() {
      if (child.exitCode !== null || child.signalCode !== null) return;
      const exited = new Promise<void>((resolve) => child.once('exit', () => resolve()));
      child.kill('SIGTERM');
      const timer = setTimeout(() => child.kill('SIGKILL'), 30_000);
      await exited;
      clearTimeout(timer);
    },
  };
}
