/**
 * How a job's processes get onto machines. `deployJob` (engine/node/jobs/deployJob.ts) only talks to
 * this interface, so a new way to reach machines is one new class: LocalLauncher (this machine),
 * SshLauncher (hosts over SSH) and SlurmLauncher, which runs the same start scripts as
 * `srun` steps inside an allocation.
 */
import type { GpuFact } from '../../cluster/nvidiaSmi.js';
import type { ClusterSettings } from '../../protocol/clusterSettings.js';
import type { Payload } from './uploadPayload.js';
import type { SlurmJobRecord } from './slurm/slurmJobRecord.js';

/** A machine processes can be placed on. */
export interface LaunchTarget {
  /** The name the user knows it by; it appears in logs, records and errors. */
  alias: string;
  /** The address other machines of the job use to reach it (agents bind their peer port there). */
  peerAddress: string;
}

/** One step of getting a target ready, for per-host progress lines. */
export interface PrepareEvent {
  target: string;
  /** `setup`: the cluster's setup commands (their output comes as progress). */
  /** `queue`: a Slurm allocation waiting for its nodes (its target is `slurm`). */
  step: 'queue' | 'connect' | 'setup' | 'upload' | 'gpu-runtime' | 'ready';
  status: 'running' | 'ok' | 'skipped' | 'fail' | 'progress';
  detail: string;
}

/** What happened on one target; one target's failure is reported here, never thrown. */
export interface TargetOutcome {
  target: string;
  ok: boolean;
  /** What failed, where, and what to do about it. */
  error?: string;
}

export interface PreparedTarget extends TargetOutcome {
  /** The agent bundle as the target's shell sees it: absolute, or relative to the target's $HOME. */
  bundle?: string;
  /** CPU cores the preflight counted there. */
  cpus?: number;
  /** The GPUs agents are pinned to there, one agent each (none: agents run on the CPU). */
  gpus?: GpuFact[];
  /** An agent pinned to a GPU may train on the CPU when tfjs-node-gpu fails to load (--allow-cpu-fallback). */
  cpuFallback?: boolean;
}

/** A process to start, detached, on a target. */
export interface ProcessSpec {
  jobId: string;
  role: 'coordinator' | 'agent';
  /** Unique within the job: `coordinator`, `agent-0` …; names its pid, log and config files. */
  name: string;
  /** Carries the job secret: it must reach the process through stdin or a mode-600 file only. */
  config: Record<string, unknown>;
  /** Environment of this process alone, literal values (an agent's CUDA_VISIBLE_DEVICES); never secrets. */
  env?: Record<string, string>;
}

export interface StartedProcess {
  target: string;
  name: string;
  role: ProcessSpec['role'];
  pid: number;
  /** The coordinator's listening port. */
  port?: number;
}

export interface ProcessState {
  name: string;
  pid: number;
  alive: boolean;
  exitCode?: number;
}

export interface TargetJobState extends TargetOutcome {
  processes: ProcessState[];
  /** The job's temporary folder is still there (it is removed by stop). */
  present: boolean;
}

/** A local TCP port that leads to an address as seen from a target (the coordinator, via SSH). */
export interface Forward {
  host: string;
  port: number;
  close(): void;
}

export interface Launcher {
  readonly kind: 'local' | 'ssh' | 'slurm';
  /** Where processes may run; the first is the head (it runs the coordinator). */
  readonly targets: readonly LaunchTarget[];
  /**
   * Whether the job's processes outlive this launcher (the default). A job whose processes end with
   * it (LocalLauncher's attached mode: `shoal train`) leaves no deploy record: its owner follows it.
   */
  readonly detached?: boolean;
  /** The cluster's remote directory, setup commands and env (clusterSettings.ts); recorded with a deployed job. */
  readonly settings?: ClusterSettings;
  /** When the job must stop with a checkpoint (ms since the epoch): before its allocation's time limit. */
  stopBy?(): number | undefined;
  /** A Slurm launcher's allocation, recorded with the job (deployRecord.ts). */
  readonly slurmJob?: SlurmJobRecord;
  /** The name agent `index` on `target` is known by in events and logs (default: the target's alias). */
  agentHost?(target: LaunchTarget, index: number): string;
  /**
   * Connect to every target and make the agent runnable there, in parallel with a bound; `inputs` (a
   * user's model and data) go to <remote dir>/inputs/<hash>/ on each target that does not share this
   * machine's files (see jobInputs.ts).
   */
  prepare(onProgress?: (e: PrepareEvent) => void, inputs?: Payload): Promise<PreparedTarget[]>;
  /** Start one detached process: it survives this launcher, the SSH session and the studio. */
  start(target: string, spec: ProcessSpec): Promise<StartedProcess>;
  /** Reach `host:port` as the target sees it (the coordinator binds to the head host only). */
  forward(target: string, host: string, port: number): Promise<Forward>;
  /** A file of the job on the target: `run` files are kept (events, logs), `temp` ones go with stop. */
  readJobFile(target: string, jobId: string, where: 'run' | 'temp', file: string): Promise<string | undefined>;
  /** Which of the job's processes are alive, per target. */
  status(jobId: string): Promise<TargetJobState[]>;
  /** Kill the job's processes on every target and remove its temporary files. */
  stop(jobId: string): Promise<TargetOutcome[]>;
  close(): void;
}
