import { agentBundlePath } from './agentBundle.js';
import { AttachedProcesses, type AttachedMode } from './attachedProcesses.js';
import type { Forward, LaunchTarget, Launcher, PreparedTarget, PrepareEvent, ProcessSpec, StartedProcess, TargetJobState, TargetOutcome } from './launcher.js';
import { readWith, startWith, statusWith, stopWith } from './jobOps.js';
import { localShell } from './localShell.js';
import { decideGpuRuntime } from './gpuRuntime.js';
import { DEVICE_PROBE_SCRIPT, parseProbeOutput } from './ssh/preflightProbe.js';

/**
 * This machine as a one-host cluster, in one of two modes:
 * - detached (the default): processes like a remote host's, started by the same sh scripts, so a job
 *   deployed here outlives the studio and `shoal jobs|attach|stop` treat it like any other;
 * - attached (`shoal train`, the studio's Train): the processes are this process's children
 *   (attachedProcesses.ts), under the same restart policy, and end with it.
 */
export class LocalLauncher implements Launcher {
  readonly kind = 'local' as const;
  readonly targets: readonly LaunchTarget[] = [{ alias: 'localhost', peerAddress: '127.0.0.1' }];
  private readonly attached: AttachedProcesses | null;

  constructor(
    attached?: AttachedMode,
    private readonly gpuOptions: { noGpu?: boolean; allowCpuFallback?: boolean } = {},
  ) {
    this.attached = attached ? new AttachedProcesses(attached) : null;
  }

  get detached(): boolean {
    return this.attached === null;
  }

  /** Many agents share this one machine: each is named apart (`local-0`, `local-1` …) in events and logs. */
  agentHost(_target: LaunchTarget, index: number): string {
    return this.attached ? `local-${index}` : 'localhost';
  }

  /**
   * This machine's GPUs are placed as a host's are (agentPlacement.ts): probed the same way, judged by
   * the same rule. tfjs-node-gpu is not installed here by Shoal: agents load it where `npm install`ed.
   */
  async prepare(onProgress?: (e: PrepareEvent) => void): Promise<PreparedTarget[]> {
    try {
      const bundle = agentBundlePath();
      const facts = parseProbeOutput((await localShell(DEVICE_PROBE_SCRIPT)).stdout);
      const allowCpuFallback = this.gpuOptions.allowCpuFallback === true;
      const gpu = decideGpuRuntime(facts, { noGpu: this.gpuOptions.noGpu === true, allowCpuFallback });
      if (facts.gpus.length > 0 || facts.gpuError) onProgress?.({ target: 'localhost', step: 'gpu-runtime', status: gpu.install ? 'ok' : 'skipped', detail: gpu.install ? gpu.gpus : gpu.reason });
      onProgress?.({ target: 'localhost', step: 'ready', status: 'ok', detail: bundle });
      return [{ target: 'localhost', ok: true, bundle, cpus: facts.cpus, gpus: gpu.install ? facts.gpus : [], cpuFallback: allowCpuFallback }];
    } catch (err) {
      return [{ target: 'localhost', ok: false, error: (err as Error).message }];
    }
  }

  start(target: string, spec: ProcessSpec): Promise<StartedProcess> {
    if (this.attached) return this.attached.start(agentBundlePath(), spec);
    return startWith(localShell, target, spec, { bundle: agentBundlePath() });
  }

  async forward(_target: string, host: string, port: number): Promise<Forward> {
    return { host, port, close: () => {} };
  }

  async readJobFile(target: string, jobId: string, where: 'run' | 'temp', file: string): Promise<string | undefined> {
    if (this.attached) return this.attached.readJobFile(where, file);
    return readWith(localShell, target, jobId, where, file);
  }

  async status(jobId: string): Promise<TargetJobState[]> {
    if (this.attached) return [this.attached.status()];
    return [await statusWith(localShell, 'localhost', jobId)];
  }

  async stop(jobId: string): Promise<TargetOutcome[]> {
    if (this.attached) return [await this.attached.stop()];
    return [await stopWith(localShell, 'localhost', jobId, true)];
  }

  /** Attached: the current process id of one of the job's processes (a restart changes it). */
  pidOf(name: string): number | undefined {
    return this.attached?.pidOf(name);
  }

  /** Attached: end every process now (no restarts), SIGKILL after `graceMs`. */
  end(graceMs?: number): void {
    this.attached?.end(graceMs);
  }

  /** Attached: resolves once every process has exited for good. */
  async exited(): Promise<void> {
    await this.attached?.exited();
  }

  /** A detached job goes on without this launcher; an attached one ends with it. */
  close(): void {
    this.attached?.end();
  }
}
