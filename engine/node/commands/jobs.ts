import { parseArgs } from 'node:util';
import type { Launcher, TargetJobState } from '../deploy/launcher.js';
import { JobEventSchema, type JobEvent } from '../../protocol/events.js';
import { mapBounded } from '../deploy/ssh/mapBounded.js';
import type { CommandIo } from './commandIo.js';
import { listDeployRecords, type DeployRecord } from '../jobs/deployRecord.js';
import { launcherFor } from '../jobs/launcherFor.js';
import { processIo } from './jobIo.js';
import { errorsOncePerHost } from './hostErrorsOnce.js';
import { SlurmLauncher } from '../deploy/slurm/slurmLauncher.js';
import type { DeployedJobSummary } from '../../protocol/deploy.js';
import { reportCommandError } from './usage.js';

/** What `shoal jobs` prints per job; the studio's listing adds whether it follows the job. */
export type JobSummary = Omit<DeployedJobSummary, 'attached'>;

type MembershipEvent = Extract<JobEvent, { type: 'membership' }>;

/**
 * A job's state from its processes on every host: the coordinator's fate decides, agents add detail.
 * With the coordinator's newest generation (membership.json on the head), a running job's agents are
 * counted as the job sees them — training, waiting (alive, no rank) and lost — apart from the
 * processes the hosts report alive.
 */
export function summarizeJob(record: DeployRecord, states: TargetJobState[], membership?: MembershipEvent): JobSummary {
  const base = { jobId: record.jobId, cluster: record.cluster, model: record.model, createdAt: record.createdAt };
  const unreachable = states.filter((s) => !s.ok);
  const head = states.find((s) => s.target === record.head);
  const coordinator = head?.processes.find((p) => p.name === 'coordinator');
  const agents = states.flatMap((s) => s.processes.filter((p) => p.name.startsWith('agent-')));
  const note = unreachable.length ? `; unreachable: ${unreachable.map((u) => u.error).join('; ')}` : '';
  if (!head?.ok) return { ...base, state: 'unknown', detail: `head host ${record.head} unreachable${note}` };
  if (coordinator?.alive) {
    const processes = `${agents.filter((a) => a.alive).length} of ${agents.length} agent processes alive`;
    if (!membership) return { ...base, state: 'running', detail: `${processes}${note}` };
    const counts = `${membership.agents.length} training, ${membership.waiting?.length ?? 0} waiting, ${membership.lost ?? 0} lost (generation ${membership.generation})`;
    return { ...base, state: 'running', detail: `${counts}; ${processes}${note}`, agents: { training: membership.agents.length, waiting: membership.waiting?.length ?? 0, lost: membership.lost ?? 0 } };
  }
  if (!head.present) return { ...base, state: 'stopped', detail: `temporary files removed${note}` };
  if (coordinator?.exitCode === 0) return { ...base, state: 'finished', detail: `coordinator exited 0${note}` };
  return { ...base, state: 'failed', detail: `coordinator ${coordinator?.exitCode === undefined ? 'gone without an exit code' : `exited ${coordinator.exitCode}`}${note}` };
}

/** A deployed job's summary, asked of its hosts: process states, and the newest generation from the head while it runs. */
export async function summarizeDeployedJob(record: DeployRecord, launcher: Launcher): Promise<JobSummary> {
  const states = await launcher.status(record.jobId);
  const head = states.find((s) => s.target === record.head);
  const running = head?.processes.some((p) => p.name === 'coordinator' && p.alive);
  const text = running ? await launcher.readJobFile(record.head, record.jobId, 'run', 'membership.json').catch(() => undefined) : undefined;
  let membership: MembershipEvent | undefined;
  try {
    const parsed = text ? JobEventSchema.safeParse(JSON.parse(text)) : undefined;
    if (parsed?.success && parsed.data.type === 'membership') membership = parsed.data;
  } catch {
    // Written atomically, so unreadable only from an older coordinator: the process counts remain.
  }
  const summary = summarizeJob(record, states, membership);
  if (!record.slurm) return summary;
  // Slurm no longer listing the allocation means it ended; a login node that does not answer says nothing of it.
  const state = launcher instanceof SlurmLauncher ? await launcher.allocationState().then((q) => q?.state ?? 'ended', () => 'unknown (the login node did not answer)') : 'ended';
  const slurm = { allocation: record.slurm.allocation, state };
  return { ...summary, slurm, detail: `Slurm job ${slurm.allocation} ${slurm.state}; ${summary.detail}` };
}

/** `shoal jobs [--json]`: every deployed job this machine knows, with its state asked of its hosts. */
export async function runJobsCommand(args: string[], io: CommandIo = processIo): Promise<number> {
  try {
    const { values } = parseArgs({ args, options: { json: { type: 'boolean' } }, allowPositionals: false });
    const records = listDeployRecords();
    const hostErrors = new Map<string, string>();
    const summaries = await mapBounded(records, 4, async ({ record }) => {
      const launcher = errorsOncePerHost(launcherFor(record), hostErrors);
      try {
        return await summarizeDeployedJob(record, launcher);
      } finally {
        launcher.close();
      }
    });
    for (const [host, error] of hostErrors) io.err(`${host}: ${error}\n`);
    if (values.json) io.out(JSON.stringify(summaries, null, 2) + '\n');
    else if (summaries.length === 0) io.out('No deployed jobs. Start one with: shoal deploy --cluster <name> --model mlp --plan pp2-dp2\n');
    else for (const s of summaries) io.out(`${s.jobId}  ${s.state.padEnd(8)}  ${s.cluster}  ${s.model}  ${s.createdAt}  ${s.detail}\n`);
    return 0;
  } catch (err) {
    return reportCommandError('jobs', err, io);
  }
}
