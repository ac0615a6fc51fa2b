import { existsSync } from 'node:fs';
import { resolve } from 'node:path';
import { parseArgs } from 'node:util';
import { stepsPerEpoch } from '../../data/dataOrder.js';
import { layersOption, openModel } from '../modelRef.js';
import { trainingSetupFrom } from '../trainingOptions.js';
import type { Launcher } from '../deploy/launcher.js';
import { markOnHosts } from '../deploy/dataFiles.js';
import { LocalLauncher } from '../deploy/localLauncher.js';
import { SshLauncher } from '../deploy/sshLauncher.js';
import { SlurmLauncher } from '../deploy/slurm/slurmLauncher.js';
import { agentsNeeded } from '../../plan/plan.js';
import { cancelQueueOnInterrupt } from './queueInterrupt.js';
import type { CommandIo } from './commandIo.js';
import { resolveClusterArg } from '../hosts/clusterArg.js';
import { connectPrompts } from './connectPrompts.js';
import { attachJob } from '../jobs/attachJob.js';
import { deployJob } from '../jobs/deployJob.js';
import { preflightJob } from '../jobs/jobPreflight.js';
import { jobEventWriter, prepareProgress, processIo } from './jobIo.js';
import { buildPlan, runLength, TRAIN_OPTIONS } from './train.js';
import { intOption } from './optionValues.js';
import { LIMITS } from '../../plan/limits.js';
import { detachOnInterrupt } from './detachHint.js';
import { reportCommandError } from './usage.js';

export const DEPLOY_USAGE = `shoal deploy --cluster <name|cluster.json|local> --model <name|model.json> [--data PATH|synthetic | --data-on-hosts PATH] [--plan pp2-dp2 | --plan-file plan.json]
              [--epochs E | --steps S] [--batch B] [--lr X] [--eval-every N] [--checkpoint-every N]
              [--trust-new] [--no-gpu] [--allow-cpu-fallback] [--detach] [--json] [--verbose]
                                   start a job on SSH hosts or a Slurm cluster; it keeps running without this command`;

// A deployed job's run folder is always its own under the runs folder, where jobs, attach and pull find
// it: --out and --overwrite are shoal train's, and refused here as unknown options.
const { out: _out, overwrite: _overwrite, ...TRAIN_OPTIONS_BUT_OUT } = TRAIN_OPTIONS;

const OPTIONS = {
  ...TRAIN_OPTIONS_BUT_OUT,
  'eval-every': { type: 'string' },
  'data-on-hosts': { type: 'string' },
  'trust-new': { type: 'boolean' },
  'no-gpu': { type: 'boolean' },
  'allow-cpu-fallback': { type: 'boolean' },
  detach: { type: 'boolean' },
  verbose: { type: 'boolean' },
} as const;

/**
 * `shoal deploy`: prepare the hosts (per-host progress on stderr), start the job detached, then follow
 * it until it ends (unless --detach). Leaving (Ctrl-C, a closed laptop) never stops the job.
 * Exit 0 when the job finished (or started, with --detach), 1 when it failed or could not start.
 */
export async function runDeployCommand(args: string[], io: CommandIo = processIo): Promise<number> {
  let launcher: Launcher | undefined;
  let queue: ReturnType<typeof cancelQueueOnInterrupt> | undefined;
  try {
    const { values } = parseArgs({ args, options: OPTIONS, allowPositionals: false });
    const cluster = resolveClusterArg(values.cluster);
    if (values.model === undefined) throw new Error('--model is required: a built-in model (shoal models) or a model.json file.');
    const model = await openModel(String(values.model), layersOption(values));
    const plan = buildPlan(values, model);
    const onHosts = values['data-on-hosts'] === undefined ? undefined : String(values['data-on-hosts']);
    if (onHosts !== undefined && values.data !== undefined) throw new Error('Give --data (uploaded to the hosts) or --data-on-hosts (already at that path on every host), not both.');
    if (onHosts !== undefined && !existsSync(resolve(onHosts))) {
      throw new Error(`--data-on-hosts ${onHosts}: not found on this machine. Shoal checks the data against the model here before deploying and compares each host's copy with this one, so this machine needs the same data at the same path too (a shared mount, or a copy).`);
    }
    const training = trainingSetupFrom(onHosts === undefined ? values : { ...values, data: onHosts }, model, plan.seed);
    if (onHosts !== undefined) training.data = markOnHosts(training.data, '--data-on-hosts');
    for (const note of training.notes) io.err(`shoal: ${note}\n`);
    // Options are read as strictly as `shoal train` reads them: "abc", "1.5" or "-5" steps are refused.
    const length = runLength(values);
    // The checks every job passes (the plan on its agents, its memory, the batch, the length), before any host is touched.
    const steps = preflightJob({ plan, model, agents: agentsNeeded(plan), training, ...length });
    const evalEvery = intOption(values, 'eval-every', { max: LIMITS.steps, example: '50' }) ?? stepsPerEpoch(training.trainSamples, plan.globalBatch);
    const checkpointEvery = intOption(values, 'checkpoint-every', { max: LIMITS.steps, example: '100' });
    queue = cluster.kind === 'slurm' ? cancelQueueOnInterrupt(io) : undefined;
    launcher =
      cluster.kind === 'local'
        ? new LocalLauncher(undefined, { noGpu: values['no-gpu'] === true, allowCpuFallback: values['allow-cpu-fallback'] === true })
        : cluster.kind === 'slurm'
          ? new SlurmLauncher(cluster.slurm, { settings: cluster.settings, tasks: agentsNeeded(plan), signal: queue!.signal, login: cluster.login, connect: connectPrompts(io, values['trust-new'] === true) })
          : new SshLauncher(cluster.hosts, { ...connectPrompts(io, values['trust-new'] === true), noGpu: values['no-gpu'] === true, allowCpuFallback: values['allow-cpu-fallback'] === true, settings: cluster.settings });
    // A Slurm cluster's nodes are known once allocated: its rows are as wide as Slurm node names usually are.
    const width = Math.max(8, ...launcher.targets.map((t) => t.alias.length));
    const { record } = await deployJob({
      launcher,
      model,
      plan,
      training,
      steps,
      evalEverySteps: evalEvery,
      checkpointEverySteps: checkpointEvery,
      cluster: cluster.name,
      hosts: cluster.kind === 'ssh' ? cluster.hosts : [],
      onProgress: prepareProgress(io, width),
    });
    queue?.release();
    const perHost = new Map<string, number>();
    for (const p of record.processes.filter((x) => x.role === 'agent')) perHost.set(p.target, (perHost.get(p.target) ?? 0) + 1);
    const summary = `job ${record.jobId} started on ${cluster.name}${record.slurm ? ` (Slurm allocation ${record.slurm.allocation})` : ''}: coordinator on ${record.head} (pid ${record.coordinator.pid}), agents ${[...perHost].map(([h, n]) => `${h}×${n}`).join(', ')}`;
    if (values.json) io.out(JSON.stringify({ type: 'deployed', jobId: record.jobId, head: record.head, processes: record.processes }) + '\n');
    else io.out(summary + '\n');
    if (values.detach) {
      io.err(`Follow it with: shoal attach ${record.jobId}   Stop it with: shoal stop ${record.jobId}\n`);
      return 0;
    }
    io.err(`Following job ${record.jobId} (leaving does not stop it; shoal stop ${record.jobId} does).\n`);
    const release = detachOnInterrupt(record.jobId, io);
    try {
      const result = await attachJob(launcher, record, jobEventWriter(io, values.json === true, values.verbose === true, training.validationSamples));
      return result.ended === 'finished' ? 0 : 1;
    } finally {
      release();
    }
  } catch (err) {
    return reportCommandError('deploy', err, io);
  } finally {
    queue?.release();
    launcher?.close();
  }
}
