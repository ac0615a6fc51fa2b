import { spawn } from 'node:child_process';
import { agentBundlePath } from './agentBundle.js';
import type { Forward, LaunchTarget, Launcher, PreparedTarget, PrepareEvent, ProcessSpec, StartedProcess, TargetJobState, TargetOutcome } from './launcher.js';
import { readWith, startWith, statusWith, stopWith, type ShellRunner } from './jobOps.js';
import type { RemoteResult } from './ssh/exec.js';

/** Run a script with this machine's `sh`, the script on stdin as over SSH. */
const localShell: ShellRunner = (script) =>
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

/**
 * This machine as a one-host cluster, with detached processes like a remote host's: a job deployed
 * here also outlives the studio, and `shoal jobs|attach|stop` treat it like any other. (LocalJob, used
 * by `shoal train`, instead keeps its processes as children and ends with them.)
 */
export class LocalLauncher implements Launcher {
  readonly kind = 'local' as const;
  readonly targets: readonly LaunchTarget[] = [{ alias: 'localhost', peerAddress: '127.0.0.1' }];

  async prepare(onProgress?: (e: PrepareEvent) => void): Promise<PreparedTarget[]> {
    try {
      const bundle = agentBundlePath();
      onProgress?.({ target: 'localhost', step: 'ready', status: 'ok', detail: bundle });
      return [{ target: 'localhost', ok: true, bundle }];
    } catch (err) {
      return [{ target: 'localhost', ok: false, error: (err as Error).message }];
    }
  }

  start(target: string, spec: ProcessSpec): Promise<StartedProcess> {
    return startWith(localShell, target, spec, agentBundlePath(), {});
  }

  async forward(_target: string, host: string, port: number): Promise<Forward> {
    return { host, port, close: () => {} };
  }

  readJobFile(target: string, jobId: string, where: 'run' | 'temp', file: string): Promise<string | undefined> {
    return readWith(localShell, target, jobId, where, file);
  }

  async status(jobId: string): Promise<TargetJobState[]> {
    return [await statusWith(localShell, 'localhost', jobId)];
  }

  async stop(jobId: string): Promise<TargetOutcome[]> {
    return [await stopWith(localShell, 'localhost', jobId, true)];
  }

  close(): void {}
}
