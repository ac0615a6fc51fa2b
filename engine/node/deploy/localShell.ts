import { spawn } from 'node:child_process';
import type { ShellRunner } from './jobOps.js';
import type { RemoteResult } from './ssh/exec.js';

/** Run a script with this machine's `sh`, the script on stdin as over SSH. */
export const localShell: ShellRunner = (script) =>
  new Promise<RemoteResult>((resolve, reject) => {
    const child = spawn('sh', ['-s'], { stdio: ['pipe', 'pipe', 'pipe'] });
    const out: Buffer[] = [];
    const err: Buffer[] = [];
    child.stdout.on('data', (d: Buffer) => out.push(d));
    child.stderr.on('data', (d: Buffer) => err.push(d));
    child.once('error', reject);
    child.once('close', (code) => resolve({ code, stdout: Buffer.concat(out).toString('utf8'), stderr: Buffer.concat(err).toString('utf8') }));
    child.stdin.end(script);
  });
