import type { SlurmSettings } from '../../../protocol/slurmSettings.js';
import type { LaunchTarget } from '../launcher.js';
import { slurmOk, type SlurmControl } from './slurmControl.js';

/** Where a request stands in Slurm's queue, as squeue says it. */
export interface QueueState {
  allocation: string;
  /** PENDING, CONFIGURING, RUNNING, … */
  state: string;
  /** Why it waits (Resources, Priority, QOSMaxJobsPerUserLimit …), `None` once running. */
  reason: string;
  /** Time since it was submitted while pending, since it started once running (squeue's %M). */
  elapsed: string;
}

export interface Allocation {
  /** Slurm's job id of the allocation. */
  id: string;
  /** Its nodes, in Slurm's order, each with the address the other nodes reach it by (NodeAddr). */
  nodes: LaunchTarget[];
  /** When Slurm ends it (ISO time), absent when it has no limit. */
  endTime?: string;
}

const POLL_MS = 1000;
const WAITING = new Set(['PENDING', 'CONFIGURING', 'REQUEUED', 'RESIZING']);

/**
 * sbatch's arguments for an allocation that holds `nodes` nodes with `tasksPerNode` tasks each: its
 * batch script only sleeps, and the job's processes run in it as `srun --overlap` steps
 * (slurmLauncher.ts), so they end with it.
 */
export function sbatchArgs(settings: SlurmSettings, request: { nodes: number; tasksPerNode: number; name: string }): string[] {
  return [
    '--parsable',
    `--job-name=${request.name}`,
    `--nodes=${request.nodes}`,
    `--ntasks-per-node=${request.tasksPerNode}`,
    ...(settings.partition ? [`--partition=${settings.partition}`] : []),
    ...(settings.account ? [`--account=${settings.account}`] : []),
    ...(settings.gres ? [`--gres=${settings.gres}`] : []),
    ...(settings.time ? [`--time=${settings.time}`] : []),
    ...(settings.constraint ? [`--constraint=${settings.constraint}`] : []),
    '--no-requeue',
    // A node that fails ends only its own steps: the job goes on with the survivors, as on SSH hosts.
    '--no-kill',
    '--output=/dev/null',
    '--wrap=exec sleep infinity',
  ];
}

/** squeue's view of one job; undefined once Slurm no longer lists it (it ended). */
export async function queueState(control: SlurmControl, id: string): Promise<QueueState | undefined> {
  const r = await control.run('squeue', ['-h', '-j', id, '-o', '%T|%r|%M']);
  const line = r.stdout.trim().split('\n')[0];
  if (r.code !== 0 || !line) return undefined;
  const [state, reason, elapsed] = line.split('|');
  return { allocation: id, state, reason, elapsed };
}

const sleep = (ms: number, signal?: AbortSignal) =>
  new Promise<void>((resolve) => {
    const t = setTimeout(resolve, ms);
    signal?.addEventListener('abort', () => (clearTimeout(t), resolve()), { once: true });
  });

/**
 * Submit the allocation and wait, however long the queue takes, until Slurm runs it; `onQueue` hears
 * each change of state or reason and, while it waits, the elapsed time every few seconds. An aborted
 * `signal` (Ctrl-C) cancels the request with scancel, so nothing is left queued.
 */
export async function requestAllocation(
  control: SlurmControl,
  settings: SlurmSettings,
  request: { nodes: number; tasksPerNode: number; name: string },
  onQueue: (q: QueueState) => void,
  signal?: AbortSignal,
): Promise<Allocation> {
  const id = (await slurmOk(control, 'sbatch', sbatchArgs(settings, request))).trim().split(';')[0];
  if (!/^\d+$/.test(id)) throw new Error(`sbatch answered "${id}" where a job id was expected.`);
  let said = '';
  let saidAt = 0;
  for (;;) {
    if (signal?.aborted) {
      await cancelAllocation(control, id);
      throw new Error(`Cancelled the Slurm allocation ${id} while it waited in the queue (nothing was started).`);
    }
    const q = await queueState(control, id);
    if (!q) throw new Error(`Slurm allocation ${id} ended before it ran: see sacct -j ${id} (or scontrol show job ${id}) for why.`);
    if (!WAITING.has(q.state) && q.state !== 'RUNNING') {
      await cancelAllocation(control, id);
      throw new Error(`Slurm allocation ${id} is ${q.state} (${q.reason}) instead of running: see scontrol show job ${id}.`);
    }
    const key = `${q.state}|${q.reason}`;
    if (key !== said || Date.now() - saidAt >= 5000) {
      onQueue(q);
      said = key;
      saidAt = Date.now();
    }
    if (q.state === 'RUNNING') return { id, ...(await allocationNodes(control, id)) };
    await sleep(POLL_MS, signal);
  }
}

/** The nodes of a running allocation with their addresses, and its end time. */
export async function allocationNodes(control: SlurmControl, id: string): Promise<{ nodes: LaunchTarget[]; endTime?: string }> {
  const [list, end] = (await slurmOk(control, 'squeue', ['-h', '-j', id, '-o', '%N|%e'])).trim().split('|');
  const names = (await slurmOk(control, 'scontrol', ['show', 'hostnames', list])).trim().split('\n').filter(Boolean);
  const nodes: LaunchTarget[] = [];
  for (const name of names) {
    const shown = await slurmOk(control, 'scontrol', ['show', 'node', '-o', name]);
    const addr = / NodeAddr=(\S+)/.exec(shown)?.[1] ?? name;
    nodes.push({ alias: name, peerAddress: addr });
  }
  return { nodes, ...(end && /^\d{4}-/.test(end) ? { endTime: end } : {}) };
}

/** scancel, then wait (bounded) until Slurm no longer lists the job as running or pending. */
export async function cancelAllocation(control: SlurmControl, id: string): Promise<void> {
  await control.run('scancel', [id]);
  for (let i = 0; i < 60; i++) {
    const q = await queueState(control, id);
    if (!q || !(WAITING.has(q.state) || q.state === 'RUNNING' || q.state === 'COMPLETING')) return;
    await sleep(500);
  }
}
