import { test as base } from '@playwright/test';
import { spawn } from 'node:child_process';
import type { ChildProcess } from 'node:child_process';

export interface Studio {
  /** The page URL with its #token fragment. */
  url: string;
  origin: string;
  token: string;
  /** Everything the launcher printed so far (stdout and stderr). */
  output(): string;
}

const URL_PATTERN = /(http:\/\/127\.0\.0\.1:\d+)\/#token=([A-Za-z0-9_-]+)/;

async function waitForExit(child: ChildProcess, ms: number): Promise<boolean> {
  if (child.exitCode !== null || child.signalCode !== null) return true;
  return new Promise((resolve) => {
    const timer = setTimeout(() => resolve(false), ms);
    child.once('exit', () => {
      clearTimeout(timer);
      resolve(true);
    });
  });
}

/**
 * One browser shell per worker: `node dist/launch.cjs --web --port 0`, exactly what `npm start` runs,
 * with the URL read from what it prints. Torn down with SIGTERM, which also stops running jobs.
 */
export const test = base.extend<Record<never, never>, { studio: Studio }>({
  studio: [
    // Playwright fixtures name their dependencies in the first argument's pattern; this one has none.
    async ({}, use) => {
      const child = spawn(process.execPath, ['dist/launch.cjs', '--web', '--port', '0'], { cwd: process.cwd(), stdio: ['ignore', 'pipe', 'pipe'] });
      let output = '';
      const found = new Promise<RegExpExecArray>((resolve, reject) => {
        const onData = (chunk: Buffer) => {
          output += chunk.toString();
          const match = URL_PATTERN.exec(output);
          if (match) resolve(match);
        };
        child.stdout?.on('data', onData);
        child.stderr?.on('data', onData);
        child.once('exit', (code) => reject(new Error(`The studio exited (code ${code}) before printing its URL:\n${output}`)));
        setTimeout(() => reject(new Error(`The studio printed no URL within 30 s:\n${output}`)), 30_000);
      });
      try {
        const match = await found;
        await use({ url: match[0], origin: match[1], token: match[2], output: () => output });
      } finally {
        child.kill('SIGTERM');
        if (!(await waitForExit(child, 30_000))) {
          child.kill('SIGKILL');
          await waitForExit(child, 5_000);
        }
      }
    },
    { scope: 'worker' },
  ],
});

export { expect } from '@playwright/test';
