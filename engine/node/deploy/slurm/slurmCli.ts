import { spawn } from 'node:child_process';
import type { RemoteResult } from '../ssh/exec.js';

/**
 * Slurm's commands (sbatch, srun, squeue, sinfo, scontrol, scancel) on this machine when it is the
 * login node (`--slurm local`; over SSH: slurmControl.ts). A missing command or a stuck controller
 * reads the same everywhere: what was run, what it said, and what to do.
 */
export function slurmRun(program: string, args: readonly string[], options: { stdin?: string; timeoutMs?: number; env?: Record<string, string> } = {}): Promise<RemoteResult> {
  return new Promise((resolve, reject) => {
    const child = spawn(program, args, { stdio: ['pipe', 'pipe', 'pipe'], env: { ...process.env, ...options.env } });
    const out: Buffer[] = [];
    const err: Buffer[] = [];
    const timeoutMs = options.timeoutMs ?? 60_000;
    const timer = setTimeout(() => {
      child.kill('SIGKILL');
      reject(new Error(`${program} ${args.join(' ')} did not finish within ${Math.round(timeoutMs / 1000)} s: is slurmctld answering (scontrol ping)?`));
    }, timeoutMs);
    child.stdout.on('data', (d: Buffer) => out.push(d));
    child.stderr.on('data', (d: Buffer) => err.push(d));
    child.once('error', (e: NodeJS.ErrnoException) => {
      clearTimeout(timer);
      reject(
        e.code === 'ENOENT'
          ? new Error(`${program} is not on this machine's PATH: a cluster added with --slurm local must be used from a Slurm login node (one where sinfo and srun work).`)
          : e,
      );
    });
    child.once('close', (code) => {
      clearTimeout(timer);
      resolve({ code, stdout: Buffer.concat(out).toString('utf8'), stderr: Buffer.concat(err).toString('utf8') });
    });
    child.stdin.on('error', () => {});
    child.stdin.end(options.stdin ?? '');
  });
}
