import type { JobEvent } from '../../protocol/events.js';
import type { Launcher, TargetJobState, TargetOutcome } from '../deploy/launcher.js';
import type { DeployRecord } from './deployRecord.js';
import { followEvents, requestCheckpointAndStop } from './jobControl.js';

/** How long a graceful stop waits for the coordinator's checkpoint before it stops the job at once. */
export const GRACEFUL_STOP_MS = 30_000;

export interface DeployedStop {
  /** The job had already ended (every process gone): nothing was touched. */
  alreadyEnded?: 'finished' | 'failed' | 'stopped';
  /** The checkpoint the coordinator wrote on the way out (its path in the head host's run folder); null: none. */
  checkpoint: string | null;
  /** Per host, what the clean-up (kill what is left, remove the temporary files) did; empty when nothing was touched. */
  outcomes: TargetOutcome[];
  /** Why the stop was not graceful, when it was meant to be. */
  note?: string;
}

/** How a job whose processes are all gone ended, from its head host's files (as `shoal jobs` reads it). */
export function endedState(record: DeployRecord, states: TargetJobState[]): DeployedStop['alreadyEnded'] {
  const head = states.find((s) => s.target === record.head);
  if (!head?.ok || states.some((s) => s.processes.some((p) => p.alive))) return undefined;
  if (!head.present) return 'stopped';
  const coordinator = head.processes.find((p) => p.name === 'coordinator');
  return coordinator?.exitCode === 0 ? 'finished' : 'failed';
}

/**
 * Stop a deployed job. Gracefully by default: the coordinator is asked (over its control connection,
 * through the head's SSH forward) to save a checkpoint at the next step boundary and end the job;
 * once it has, or after `waitMs`, or when it cannot be asked, whatever is left is killed and the
 * temporary files go (launcher.stop). `now` skips the checkpoint. A job that has already ended is
 * left as it is, so that `shoal jobs` keeps saying how it ended.
 */
export async function stopDeployedJob(launcher: Launcher, record: DeployRecord, options: { now?: boolean; waitMs?: number; say?: (line: string) => void } = {}): Promise<DeployedStop> {
  const say = options.say ?? (() => {});
  const states = await launcher.status(record.jobId);
  const ended = endedState(record, states);
  if (ended) return { alreadyEnded: ended, checkpoint: null, outcomes: [] };
  const head = states.find((s) => s.target === record.head);
  const coordinatorAlive = head?.processes.some((p) => p.name === 'coordinator' && p.alive) ?? false;
  let checkpoint: string | null = null;
  let note: string | undefined;
  if (!options.now && coordinatorAlive) {
    try {
      say(`asking the coordinator on ${record.head} to save a checkpoint and stop (at most ${(options.waitMs ?? GRACEFUL_STOP_MS) / 1000} s; shoal stop --now does not wait)`);
      const outcome = await checkpointAndStop(launcher, record, options.waitMs ?? GRACEFUL_STOP_MS);
      checkpoint = outcome.checkpoint;
      if (outcome.timedOut) note = `no checkpoint came within ${(options.waitMs ?? GRACEFUL_STOP_MS) / 1000} s, so the job was stopped without one`;
      else await untilProcessesGone(launcher, record);
    } catch (err) {
      note = `the coordinator could not be asked for a checkpoint (${(err as Error).message}), so the job was stopped without one`;
    }
  }
  return { checkpoint, outcomes: await launcher.stop(record.jobId), ...(note ? { note } : {}) };
}

/** Ask for the checkpoint and follow only the events after the history so far, until the job's last word. */
async function checkpointAndStop(launcher: Launcher, record: DeployRecord, waitMs: number): Promise<{ checkpoint: string | null; timedOut: boolean }> {
  const config = await launcher.readJobFile(record.head, record.jobId, 'temp', 'coordinator.config');
  if (config === undefined) throw new Error(`its config file is gone from ${record.head}: it is ending`);
  const secret = String((JSON.parse(config) as { secret?: unknown }).secret ?? '');
  const history = (await launcher.readJobFile(record.head, record.jobId, 'run', 'events.jsonl')) ?? '';
  const since = history.split('\n').filter((l) => l.trim()).length;
  const forward = await launcher.forward(record.head, record.coordinator.listenHost, record.coordinator.port);
  const at = { host: forward.host, port: forward.port, secret };
  let detach: (() => void) | undefined;
  try {
    const outcome = new Promise<{ checkpoint: string | null; timedOut: boolean }>((resolve) => {
      let saved: string | null = null;
      const timer = setTimeout(() => resolve({ checkpoint: saved, timedOut: true }), waitMs);
      const end = (timedOut: boolean) => {
        clearTimeout(timer);
        resolve({ checkpoint: saved, timedOut });
      };
      const onEvent = (e: JobEvent) => {
        if (e.type === 'checkpoint' && e.action === 'saved') saved = e.path;
        if (e.type === 'final' || (e.type === 'status' && (e.state === 'stopped' || e.state === 'failed'))) end(false);
      };
      // The coordinator closing the stream is its end too (it exits once it has stopped).
      void followEvents(at, onEvent, () => end(false), since).then((d) => (detach = d), () => end(false));
    });
    await requestCheckpointAndStop(at);
    return await outcome;
  } finally {
    detach?.();
    forward.close();
  }
}

/** After its last word the coordinator ends its agents and exits: wait (bounded) so the clean-up finds nothing to kill. */
async function untilProcessesGone(launcher: Launcher, record: DeployRecord): Promise<void> {
  const deadline = Date.now() + 10_000;
  while (Date.now() < deadline) {
    const states = await launcher.status(record.jobId).catch(() => []);
    if (!states.some((s) => s.processes.some((p) => p.alive))) return;
    await new Promise((r) => setTimeout(r, 250));
  }
}
