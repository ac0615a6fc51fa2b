import type { ClusterSettings } from '../../../protocol/clusterSettings.js';
import type { SlurmSettings } from '../../../protocol/slurmSettings.js';
import type { SshHost } from '../../hosts/host.js';
import { agentPayload } from '../agentPayload.js';
import { runSetup } from '../clusterSetup.js';
import { readWith, statusWith, stopWith, type ShellRunner } from '../jobOps.js';
import { parseStartOutput, startScript } from '../jobScripts.js';
import type { Forward, LaunchTarget, Launcher, PreparedTarget, PrepareEvent, ProcessSpec, StartedProcess, TargetJobState, TargetOutcome } from '../launcher.js';
import { DEFAULT_REMOTE_DIR, remoteDirWord, remotePath } from '../remotePaths.js';
import { assertPlainName, shQuote } from '../shellQuote.js';
import type { ConnectOptions } from '../ssh/connectHost.js';
import { mapBounded } from '../ssh/mapBounded.js';
import type { Payload } from '../uploadPayload.js';
import { cancelAllocation, queueState, requestAllocation, type Allocation, type QueueState } from './allocation.js';
import { localSlurmControl, sshSlurmControl, type SlurmControl } from './slurmControl.js';
import type { SlurmJobRecord } from './slurmJobRecord.js';
import { srunShell, startStep } from './srunSteps.js';

export interface SlurmLauncherOptions {
  /** The cluster's remote directory, setup commands and env. */
  settings?: ClusterSettings;
  /** Agent tasks the allocation must hold (one per node). */
  tasks?: number;
  /** An allocation that exists already (a deployed job found again from its record). */
  allocation?: Allocation;
  /** Aborted (Ctrl-C) while the request waits in the queue: it is cancelled. */
  signal?: AbortSignal;
  /** The login host, for a cluster whose login node is reached over SSH (`login: "ssh"`). */
  login?: SshHost;
  /** Host keys, trust and passphrases for the login host, as for SSH hosts. */
  connect?: ConnectOptions;
}

const QUEUE_TARGET = 'slurm';
/** The most time kept between the checkpoint stop and a time-limited allocation's end. */
const STOP_MARGIN_MS = 120_000;
/** In jobs/<id>/ while stop() stops the nodes: the coordinator's step then leaves the allocation to it. */
const STOPPING = '.stopping';

/**
 * A Slurm cluster through its login node (this machine, `--slurm local`, or a host over SSH:
 * slurmControl.ts). `prepare` asks for an
 * allocation sized by the job (one node per agent) and waits in the queue, saying why it waits; it
 * copies the agent build and the job's inputs once into the login node's remote directory, which the
 * nodes share, and checks that every node sees them. Each process is a long-lived `srun --overlap`
 * step running the same start script as over SSH, so the processes live inside the allocation (Slurm
 * tracks them; `scancel` ends them). Status, stop and checks are short steps on the node concerned.
 */
export class SlurmLauncher implements Launcher {
  readonly kind = 'slurm' as const;
  readonly settings: ClusterSettings;
  private allocation: Allocation | undefined;
  private readonly remoteDir: string;
  private bundle: string | undefined;
  private started = 0;
  private readonly ownsAllocation: boolean;
  private readonly control: SlurmControl;

  constructor(
    readonly slurm: SlurmSettings,
    private readonly options: SlurmLauncherOptions = {},
  ) {
    this.settings = options.settings ?? {};
    this.remoteDir = this.settings.remoteDir ?? DEFAULT_REMOTE_DIR;
    this.allocation = options.allocation;
    this.ownsAllocation = options.allocation === undefined;
    if (slurm.login === 'ssh' && !options.login) throw new Error('This Slurm cluster is reached through an SSH login host, but none was given: add it again with shoal cluster add <name> --slurm user@login-host.');
    this.control = slurm.login === 'ssh' ? sshSlurmControl(options.login!, this.settings.env ?? {}, options.connect) : localSlurmControl(this.settings.env ?? {});
  }

  /** The allocation's nodes, head first; empty until prepare got an allocation. */
  get targets(): readonly LaunchTarget[] {
    return this.allocation?.nodes ?? [];
  }

  /** The record's part that finds this job's allocation again. */
  get slurmJob(): SlurmJobRecord | undefined {
    const a = this.allocation;
    return a && { settings: this.slurm, allocation: a.id, nodes: a.nodes, ...(a.endTime ? { endTime: a.endTime } : {}), ...(this.options.login ? { login: this.options.login } : {}) };
  }

  /**
   * Before the allocation's end: a quarter of the time left, at most STOP_MARGIN_MS, is kept for the
   * checkpoint (a step, then the write) and for Slurm's own warning signal, which comes at the end.
   */
  stopBy(): number | undefined {
    const end = this.allocation?.endTime ? new Date(this.allocation.endTime).getTime() : NaN;
    if (!Number.isFinite(end)) return undefined;
    return Math.round(end - Math.min(STOP_MARGIN_MS, Math.max(0, end - Date.now()) / 4));
  }

  /** Where the allocation stands in Slurm's queue; undefined once Slurm no longer lists it. */
  allocationState(): Promise<QueueState | undefined> {
    return this.allocation ? queueState(this.control, this.allocation.id) : Promise.resolve(undefined);
  }

  private node(target: string): LaunchTarget {
    const n = this.targets.find((t) => t.alias === target);
    if (!n) throw new Error(`No node "${target}" in Slurm allocation ${this.allocation?.id ?? '(none yet)'} (nodes: ${this.targets.map((t) => t.alias).join(', ') || 'none'}).`);
    return n;
  }

  private shell(target: string): ShellRunner {
    return srunShell(this.control, this.allocation!.id, this.node(target).alias);
  }

  async prepare(onProgress: (e: PrepareEvent) => void = () => {}, inputs?: Payload): Promise<PreparedTarget[]> {
    const tasks = this.options.tasks ?? 1;
    if (!this.allocation) {
      const where = [this.slurm.partition && `partition ${this.slurm.partition}`, this.slurm.account && `account ${this.slurm.account}`].filter(Boolean).join(', ');
      onProgress({ target: QUEUE_TARGET, step: 'queue', status: 'running', detail: `asking for ${tasks} node${tasks === 1 ? '' : 's'} × 1 task${where ? ` (${where})` : ''}` });
      try {
        this.allocation = await requestAllocation(this.control, this.slurm, { nodes: tasks, tasksPerNode: 1, name: 'shoal' }, (q) => onProgress({ target: QUEUE_TARGET, step: 'queue', status: q.state === 'RUNNING' ? 'ok' : 'progress', detail: queueLine(q) }), this.options.signal);
      } catch (err) {
        onProgress({ target: QUEUE_TARGET, step: 'queue', status: 'fail', detail: (err as Error).message });
        return [{ target: QUEUE_TARGET, ok: false, error: (err as Error).message }];
      }
      onProgress({ target: QUEUE_TARGET, step: 'queue', status: 'ok', detail: `allocation ${this.allocation.id} on ${this.targets.map((t) => t.alias).join(', ')}${this.allocation.endTime ? `, until ${this.allocation.endTime}` : ''}` });
    }
    const outcomes = await this.prepareNodes(onProgress, inputs);
    if (outcomes.some((o) => !o.ok) && this.ownsAllocation && this.started === 0) await this.release();
    return outcomes;
  }

  private async prepareNodes(onProgress: (e: PrepareEvent) => void, inputs?: Payload): Promise<PreparedTarget[]> {
    const head = this.targets[0].alias;
    const files: string[] = [];
    try {
      onProgress({ target: head, step: 'upload', status: 'running', detail: `agent build${inputs?.files.length ? ', model and data' : ''} into ${this.remoteDir} on ${this.control.where}` });
      const payload = agentPayload();
      const progress = (detail: string) => onProgress({ target: head, step: 'upload', status: 'progress', detail });
      const agent = await this.control.copyPayload(payload, 'agent', this.remoteDir, progress);
      this.bundle = `${agent.dir}/${payload.bundle}`;
      files.push(remotePath(this.remoteDir, 'agent', payload.hash, payload.bundle));
      onProgress({ target: head, step: 'upload', status: agent.copied ? 'ok' : 'skipped', detail: `agent build ${remotePath(this.remoteDir, 'agent', payload.hash)} ${agent.copied ? 'copied' : 'already there'}; the nodes share it` });
      if (inputs && inputs.files.length > 0) {
        const copied = (await this.control.copyPayload(inputs, 'inputs', this.remoteDir, progress)).copied;
        files.push(remotePath(this.remoteDir, 'inputs', inputs.hash, '.shoal-complete'));
        const dir = remotePath(this.remoteDir, 'inputs', inputs.hash);
        onProgress({ target: head, step: 'upload', status: copied ? 'ok' : 'skipped', detail: `model and data ${dir} ${copied ? `copied (${(inputs.bytes / 1024 ** 2).toFixed(1)} MiB)` : 'already there'}; the nodes share it` });
      }
    } catch (err) {
      return this.targets.map((t) => ({ target: t.alias, ok: false, error: `${t.alias}, upload: ${(err as Error).message}` }));
    }
    return mapBounded(this.targets, 8, async (t): Promise<PreparedTarget> => {
      try {
        onProgress({ target: t.alias, step: 'connect', status: 'running', detail: `srun on ${t.alias} (${t.peerAddress})` });
        const seen = await this.shell(t.alias)(seesScript(files));
        if (seen.code !== 0) throw new Error((seen.stderr.trim() || seen.stdout.trim() || `srun exited ${seen.code}`).split('\n').slice(-6).join('\n'));
        const missing = [...seen.stdout.matchAll(/^missing (.*)$/gm)].map((m) => m[1]);
        if (missing.length) {
          throw new Error(
            `the node cannot see ${missing.join(', ')}, copied there on ${this.control.where}: the remote directory ${this.remoteDir} must be on a file system the nodes share (the home, usually). Give the cluster a shared one: shoal cluster add <name> --remote-dir /shared/path`,
          );
        }
        if (!/^node /m.test(seen.stdout)) throw new Error('node (>= 20) is not on the PATH of jobs on this node: load it in the cluster\'s setup (--setup \'module load nodejs\') or env');
        if (this.settings.setup?.length) {
          onProgress({ target: t.alias, step: 'setup', status: 'running', detail: `${this.settings.setup.length} setup command(s)` });
          // srun returns the output at the end: its lines are handed over then, as runSetup reads them.
          const lines = async (script: string, onLine: (line: string) => void) => {
            const r = await this.shell(t.alias)(script);
            for (const line of r.stdout.split('\n')) if (line) onLine(line);
            return r;
          };
          await runSetup(lines, this.settings.setup, this.settings.env ?? {}, () => {});
        }
        onProgress({ target: t.alias, step: 'ready', status: 'ok', detail: `ready (${/^node (.*)$/m.exec(seen.stdout)?.[1]})` });
        return { target: t.alias, ok: true, bundle: this.bundle };
      } catch (err) {
        const error = `${t.alias} (Slurm allocation ${this.allocation!.id}): ${(err as Error).message}`;
        onProgress({ target: t.alias, step: 'connect', status: 'fail', detail: error });
        return { target: t.alias, ok: false, error };
      }
    });
  }

  async start(target: string, spec: ProcessSpec): Promise<StartedProcess> {
    if (!this.bundle) throw new Error(`${target} was not prepared: run prepare() before starting processes there.`);
    const node = this.node(target);
    // The step lives as long as the script: `wait` holds it until the process's supervisor ends. The
    // job ends with its coordinator (finished or failed): then the allocation is given back, unless
    // stop() is at work (it marks that, stops every node, then cancels the allocation itself).
    const script =
      startScript(spec, { host: node.alias, bundle: this.bundle, remoteDir: this.remoteDir, env: { SHOAL_MNIST_DIR: '"$(dirname "$B")/mnist"' }, clusterEnv: this.settings.env ?? {} }) +
      'wait || :\n' +
      (spec.role === 'coordinator' ? `[ -f "$JOB/${STOPPING}" ] || scancel "$SLURM_JOB_ID"\n` : '');
    const dir = `${remoteDirWord(this.remoteDir)}/${shQuote(`jobs/${assertPlainName(spec.jobId, 'Job id')}/.srun`)}`;
    const wanted = (out: string) => {
      const p = parseStartOutput(out);
      return p.pid !== undefined && (spec.role !== 'coordinator' || p.port !== undefined);
    };
    try {
      const out = await startStep(this.control, this.allocation!.id, node.alias, spec.name, script, dir, wanted);
      const { pid, port } = parseStartOutput(out);
      this.started++;
      return { target: node.alias, name: spec.name, role: spec.role, pid: pid!, ...(port === undefined ? {} : { port }) };
    } catch (err) {
      throw new Error(`Starting the ${spec.role} ${spec.name} on ${node.alias} (Slurm allocation ${this.allocation!.id}) failed: ${(err as Error).message}`);
    }
  }

  /** The nodes' addresses as the login node reaches them: directly from this machine, or through the SSH session. */
  forward(_target: string, host: string, port: number): Promise<Forward> {
    return this.control.forward(host, port);
  }

  /** Run files are on the shared remote directory, which the login node reads. */
  readJobFile(target: string, jobId: string, where: 'run' | 'temp', file: string): Promise<string | undefined> {
    return readWith(this.control.shell, target, jobId, where, file, { remoteDir: this.remoteDir });
  }

  /** Per node: its processes, alive as far as the node itself says; all gone once the allocation ended. */
  async status(jobId: string): Promise<TargetJobState[]> {
    const q = this.allocation && (await queueState(this.control, this.allocation.id).catch(() => undefined));
    const running = q?.state === 'RUNNING';
    return mapBounded(this.targets, 8, async (t): Promise<TargetJobState> => {
      if (running) {
        const s = await statusWith(this.shell(t.alias), t.alias, jobId, { remoteDir: this.remoteDir }).catch((err: Error) => ({ target: t.alias, ok: false, present: false, processes: [], error: err.message }));
        if (s.ok) return s;
      }
      // Slurm ended the allocation, and every process in it: what the shared folder says, none alive.
      try {
        const s = await statusWith(this.control.shell, t.alias, jobId, { remoteDir: this.remoteDir });
        return { ...s, processes: s.processes.map((p) => ({ ...p, alive: false })) };
      } catch (err) {
        return { target: t.alias, ok: false, present: false, processes: [], error: `${t.alias}: ${this.control.where}: ${(err as Error).message}` };
      }
    });
  }

  /**
   * The stop script on the head node first (the coordinator records the stop), then on the others,
   * then scancel: whatever a node could not stop ends with the allocation. The job's temporary files
   * go last, from the login node.
   */
  async stop(jobId: string): Promise<TargetOutcome[]> {
    const jobDir = `${remoteDirWord(this.remoteDir)}/${shQuote(`jobs/${assertPlainName(jobId, 'Job id')}`)}`;
    const q = this.allocation && (await queueState(this.control, this.allocation.id).catch(() => undefined));
    if (q?.state === 'RUNNING') {
      const marked = await this.control.shell(`mkdir -p ${jobDir} && : > ${jobDir}/${STOPPING}\n`);
      if (marked.code !== 0) throw new Error(`Could not mark job ${jobId} as stopping on ${this.control.where}: ${marked.stderr.trim() || `exit ${marked.code}`}`);
      const stopOn = (t: LaunchTarget, isHead: boolean) =>
        stopWith(this.shell(t.alias), t.alias, jobId, isHead, { remoteDir: this.remoteDir }).catch((err: Error): TargetOutcome => ({ target: t.alias, ok: false, error: `${t.alias}: ${err.message}` }));
      const [head, ...others] = this.targets;
      await stopOn(head, true);
      await mapBounded(others, 8, (t) => stopOn(t, false));
    }
    try {
      await this.release();
    } catch (err) {
      return this.targets.map((t) => ({ target: t.alias, ok: false, error: `${t.alias}: scancel ${this.allocation?.id}: ${(err as Error).message}` }));
    }
    await this.control.shell(`rm -rf ${jobDir}\n`).catch(() => {});
    // With the allocation cancelled, nothing of the job runs on any node, whatever a stop script said.
    return this.targets.map((t) => ({ target: t.alias, ok: true }));
  }

  private async release(): Promise<void> {
    if (this.allocation) await cancelAllocation(this.control, this.allocation.id);
  }

  /** A job that started goes on without this launcher; an allocation nothing was started in is given back. */
  close(): void {
    if (this.ownsAllocation && this.started === 0 && this.allocation) void this.release().catch(() => {}).finally(() => this.control.close());
    else this.control.close();
  }
}

/** `PENDING (Priority), waiting 0:42` as squeue says it. */
export function queueLine(q: QueueState): string {
  if (q.state === 'RUNNING') return `allocation ${q.allocation} running`;
  return `allocation ${q.allocation} ${q.state}${q.reason && q.reason !== 'None' ? ` (${q.reason})` : ''}, waiting ${q.elapsed}`;
}

/** On a node: `missing <path>` for each file it cannot see, and `node <version>` when Node runs there. */
function seesScript(files: readonly string[]): string {
  const word = (p: string) => (p.startsWith('~/') ? `"$HOME"/'${p.slice(2)}'` : `'${p}'`);
  return [...files.map((f) => `[ -f ${word(f)} ] || echo "missing ${f}"`), 'command -v node >/dev/null 2>&1 && echo "node $(node --version)"', 'true', ''].join('\n');
}
