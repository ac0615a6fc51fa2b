import type { ModelGraph } from '../../model/graph.js';
import { agentsNeeded, type Plan } from '../../plan/plan.js';
import type { SshHost } from '../hosts/host.js';
import type { Launcher, PreparedTarget, PrepareEvent, StartedProcess } from '../deploy/launcher.js';
import { mapBounded } from '../deploy/ssh/mapBounded.js';
import { DEPLOY_RECORD_VERSION, writeDeployRecord, type DeployRecord } from './deployRecord.js';
import { createRunDir } from './runStore.js';
import { assertRunFolderUsable } from './runFolderGuard.js';
import { releaseRunLock } from './runLock.js';
import type { TrainingSetup } from '../../protocol/trainingSetup.js';
import { jobInputs } from '../deploy/jobInputs.js';
import { modelRef } from '../modelRef.js';
import { placeAgentSlots, splitTensorGroupWarnings, type AgentSlot } from './agentPlacement.js';
import { assertPlanRuns } from './jobPreflight.js';
import { agentConfig, coordinatorConfig, newJobId, newJobSecret, type CoordinatorTuning } from './jobConfigs.js';

export interface DeployOptions {
  launcher: Launcher;
  model: ModelGraph;
  plan: Plan;
  /** Data and losses, checked before (absent: the built-in models' MNIST digits, which travel with the agent). */
  training?: TrainingSetup;
  steps: number;
  evalEverySteps: number;
  checkpointEverySteps?: number;
  /** The cluster as the user named it, and its hosts, for the job record. */
  cluster: string;
  hosts: SshHost[];
  onProgress?: (e: PrepareEvent) => void;
  /** The job's id, when the caller must know it before the hosts are ready (the studio polls by it). */
  jobId?: string;
  /** Agent processes (default: the plan's); more than the plan needs start as spares the elastic plan uses. */
  agents?: number;
  /** The run folder here (default: a new one under runsRoot()). */
  runDir?: string;
  /** Continue from this checkpoint: parameters, optimizer state and step. */
  resumeFrom?: string;
  /** Replace an earlier run in `runDir` (runFolderGuard.ts); without it such a folder is refused. */
  overwrite?: boolean;
  tuning?: CoordinatorTuning;
  /** Benchmarks and tests: agent i behaves as a device slowdowns[i] times slower. */
  agentSlowdowns?: number[];
  /** Hears what is worth a warning but does not stop the deploy (a stale run folder lock taken over). */
  onWarning?: (message: string) => void;
}

export interface DeployedJob {
  record: DeployRecord;
  runDir: string;
}

/** Some hosts could not be prepared; `prepared` says, per host, what happened. */
export class DeployError extends Error {
  constructor(
    message: string,
    readonly prepared: PreparedTarget[] = [],
  ) {
    super(message);
    this.name = 'DeployError';
  }
}

/**
 * Deploy a job: prepare every host (in parallel; each host's failure is reported for that host), start
 * the coordinator on the head host and the agents on every host, detached, and record the job here
 * (deploy.json) and there (~/.shoal/jobs/<id>/<host>/, pid files: remotePaths.ts). Returns once every process has started;
 * training goes on without this process (see attachJob to follow it).
 */
export async function deployJob(o: DeployOptions): Promise<DeployedJob> {
  const { launcher, model, plan } = o;
  const agents = o.agents ?? agentsNeeded(plan);
  const folderUse = { overwrite: o.overwrite, resuming: o.resumeFrom !== undefined };
  try {
    assertPlanRuns(plan, model, agents);
    // Before any host is prepared: a run folder that may not be used is refused with nothing done.
    if (o.runDir !== undefined) assertRunFolderUsable(o.runDir, folderUse);
  } catch (err) {
    throw new DeployError((err as Error).message);
  }

  // A user's model file and data folder go with the job (this machine reads them where they are).
  const inputs = o.training && launcher.kind !== 'local' ? jobInputs(model, o.training) : null;
  const remote = inputs && launcher.kind !== 'local' ? inputs.remote(launcher.settings?.remoteDir) : { model, training: o.training };
  const prepared = await launcher.prepare(o.onProgress, inputs ?? undefined);
  const failed = prepared.filter((p) => !p.ok);
  if (failed.length > 0) {
    const ready = prepared.filter((p) => p.ok).map((p) => p.target);
    throw new DeployError(
      `${failed.length} of ${prepared.length} hosts are not ready, so the job was not started:\n` +
        failed.map((f) => `  ✗ ${f.error}`).join('\n') +
        (ready.length ? `\nReady: ${ready.join(', ')} (their agent upload is kept; a new deploy will not repeat it).` : '') +
        `\nFix the hosts above (shoal cluster test shows details), or deploy to a cluster without them.`,
      prepared,
    );
  }

  const jobId = o.jobId ?? newJobId();
  const createdAt = new Date().toISOString();
  const secret = newJobSecret();
  const head = launcher.targets[0];
  let placement: AgentSlot[];
  try {
    placement = placeAgentSlots(plan, agents, launcher.targets, prepared);
  } catch (err) {
    throw new DeployError((err as Error).message, prepared);
  }
  for (const warning of splitTensorGroupWarnings(plan, model, placement)) o.onWarning?.(warning);
  // Agents on other hosts must reach the coordinator: then it listens on the head's cluster address.
  // Alone on the head, it listens on loopback only. The studio goes through an SSH forward either way.
  const listenHost = placement.every((a) => a.target.alias === head.alias) ? '127.0.0.1' : head.peerAddress;
  const runDir = createRunDir({ jobId, createdAt, model: modelRef(model), plan, agents, steps: o.steps, ...(o.training ? { training: o.training } : {}) }, o.runDir, o.onWarning, folderUse);
  const detached = launcher.detached ?? true;
  // The run folder is this job's from here (runLock.ts). A detached job's folder is guarded while it is
  // deployed; an attached one's until its job ends (the caller releases it), or now if it never starts.
  try {
    const coordinator = await launcher.start(head.alias, {
      jobId,
      role: 'coordinator',
      name: 'coordinator',
      // Its files are relative to the job's run folder on the head host (~/.shoal/runs/<id>, the process's
      // cwd); a job attached to this process names its folder here.
      config: coordinatorConfig(
        { jobId, model: remote.model, plan, training: remote.training, agents, steps: o.steps, evalEverySteps: o.evalEverySteps, checkpointEverySteps: o.checkpointEverySteps, resumeFrom: o.resumeFrom, tuning: o.tuning, stopBy: launcher.stopBy?.() },
        secret,
        { runDir: detached ? '' : runDir, listenHost },
      ),
    });
    const record: DeployRecord = {
      version: DEPLOY_RECORD_VERSION,
      jobId,
      createdAt,
      launcher: launcher.kind,
      cluster: o.cluster,
      hosts: o.hosts.filter((h) => launcher.targets.some((t) => t.alias === h.alias)),
      ...(launcher.settings && Object.keys(launcher.settings).length ? { settings: launcher.settings } : {}),
      ...(launcher.slurmJob ? { slurm: launcher.slurmJob } : {}),
      head: head.alias,
      model: modelRef(model),
      steps: o.steps,
      coordinator: { listenHost, port: coordinator.port!, pid: coordinator.pid },
      processes: [coordinator],
    };
    // Recorded before the agents start, so that `shoal stop` can clean up whatever happens next.
    if (detached) writeDeployRecord(runDir, record);

    const started = await mapBounded(placement, 8, async ({ target, slot, gpu, env }): Promise<StartedProcess | Error> =>
      launcher
        .start(target.alias, {
          jobId,
          role: 'agent',
          name: `agent-${slot}`,
          config: agentConfig(secret, { host: listenHost, port: coordinator.port! }, target.peerAddress, launcher.agentHost?.(target, slot) ?? target.alias, o.agentSlowdowns?.[slot], { slot, ...(gpu ? { gpu } : {}) }),
          env,
        })
        .catch((err: Error) => err),
    );
    record.processes.push(...started.filter((s): s is StartedProcess => !(s instanceof Error)));
    if (detached) writeDeployRecord(runDir, record);
    const errors = started.filter((s): s is Error => s instanceof Error);
    if (errors.length > 0) {
      const stopped = await launcher.stop(jobId);
      const leftovers = stopped.filter((s) => !s.ok).map((s) => s.error);
      throw new DeployError(
        `${errors.length} of ${placement.length} agents did not start, so job ${jobId} was stopped:\n` +
          errors.map((e) => `  ✗ ${e.message}`).join('\n') +
          (leftovers.length ? `\nCleaning up also failed:\n  ${leftovers.join('\n  ')}\nRun shoal stop ${jobId} once the hosts are reachable.` : ''),
      );
    }
    return { record, runDir };
  } catch (err) {
    releaseRunLock(runDir);
    throw err;
  } finally {
    if (detached) releaseRunLock(runDir);
  }
}
