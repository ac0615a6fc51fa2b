import { spawn } from 'node:child_process';
import { chromium } from '@playwright/test';
import type { Browser } from '@playwright/test';

/** The browser shell as `npm start -- --web` runs it (dist/launch.cjs, built), on a free port; its URL with the token. */
export async function startWebStudio(): Promise<{ url: string; stop(): Promise<void> }> {
  const child = spawn(process.execPath, ['dist/launch.cjs', '--web', '--port', '0'], { stdio: ['ignore', 'pipe', 'pipe'] });
  let output = '';
  const url = await new Promise<string>((resolve, reject) => {
    const onData = (chunk: Buffer) => {
      output += chunk.toString();
      const match = /http:\/\/127\.0\.0\.1:\d+\/#token=[A-Za-z0-9_-]+/.exec(output);
      if (match) resolve(match[0]);
    };
    child.stdout.on('data', onData);
    child.stderr.on('data', onData);
    child.once('exit', (code) => reject(new Error(`The studio exited (code ${code}) before printing its URL:\n${output}`)));
    setTimeout(() => reject(new Error(`The studio printed no URL within 60 s:\n${output}`)), 60_000);
  });
  const stop = () =>
    new Promise<void>((resolve) => {
      if (child.exitCode !== null) return resolve();
      child.once('exit', () => resolve());
      child.kill('SIGTERM');
      setTimeout(() => child.kill('SIGKILL'), 10_000).unref();
    });
  return { url, stop };
}

/** Debian's Chromium (SHOAL_CHROMIUM or /usr/bin/chromium), headless with software rendering, as the e2e tests run it. */
export function launchChromium(): Promise<Browser> {
  return chromium.launch({
    executablePath: process.env.SHOAL_CHROMIUM ?? '/usr/bin/chromium',
    args: ['--headless', '--no-sandbox', '--disable-gpu', '--disable-quic', '--no-first-run', '--disable-background-networking', '--disable-component-update', '--disable-sync'],
  });
}
