import { JobEventSchema, type JobEvent } from '../../protocol/events.js';
import type { Launcher } from '../deploy/launcher.js';
import type { DeployRecord } from './deployRecord.js';
import { followEvents } from './jobControl.js';
import { remoteRunDir } from '../deploy/remotePaths.js';

export interface AttachResult {
  /** Whether the coordinator was running and the events came live (else from the head host's history file). */
  live: boolean;
  /** How the job ended, if it has: `finished`, `failed` or `stopped`. */
  ended?: 'finished' | 'failed' | 'stopped';
  events: number;
}

/**
 * Follow a deployed job from its first event: while the coordinator runs, through a forward to it on
 * the head host (it replays its whole history to a new studio, then streams); once it has exited, from
 * the history it left in ~/.shoal/runs/<id>/events.jsonl. Resolves when the job has ended, or — with
 * `follow: false` — once the history so far has been delivered.
 */
export async function attachJob(launcher: Launcher, record: DeployRecord, onEvent: (e: JobEvent) => void, options: { follow?: boolean; signal?: AbortSignal } = {}): Promise<AttachResult> {
  const follow = options.follow ?? true;
  let delivered = 0;
  let ended: AttachResult['ended'];
  const deliver = (event: JobEvent) => {
    // Detached (the studio is closing): the job goes on, nothing more is delivered.
    if (options.signal?.aborted) return;
    delivered++;
    if (event.type === 'final') ended = 'finished';
    if (event.type === 'status' && (event.state === 'failed' || event.state === 'stopped')) ended = event.state;
    onEvent(event);
  };

  const [headState] = (await launcher.status(record.jobId)).filter((s) => s.target === record.head);
  const coordinatorAlive = headState?.processes.some((p) => p.name === 'coordinator' && p.alive) ?? false;
  if (headState && !headState.ok) throw new Error(`Cannot reach the head host of job ${record.jobId}: ${headState.error}`);
  let liveError: Error | undefined;
  // A coordinator that crashes is started again by its supervisor, on the same port, resuming from
  // its newest checkpoint (agents/coordinator/restart.ts): while that loop lives, follow the new one.
  for (let attempt = 0; coordinatorAlive && attempt < RECONNECTS && !options.signal?.aborted; attempt++) {
    try {
      await followLive(launcher, record, deliver, follow, () => ended !== undefined, delivered, options.signal);
      if (ended || !follow || options.signal?.aborted) return { live: true, events: delivered, ...(ended ? { ended } : {}) };
    } catch (err) {
      // The coordinator may have exited between the check and the connection: its history is on disk.
      liveError = err as Error;
    }
    if (!(await supervisorAlive(launcher, record))) break;
    await new Promise((r) => setTimeout(r, 1500));
  }
  if (options.signal?.aborted) return { live: coordinatorAlive, events: delivered };
  // From the history file, skipping what already came live.
  const text = await launcher.readJobFile(record.head, record.jobId, 'run', 'events.jsonl');
  if (text === undefined && liveError) throw liveError;
  const runs = remoteRunDir(record.jobId, record.settings?.remoteDir);
  if (text === undefined) throw new Error(`Job ${record.jobId} has no event history on ${record.head} (${runs}/events.jsonl): its coordinator may not have started. Look at ${runs}/coordinator.log there.`);
  const lines = text.split('\n').filter((l) => l.trim());
  for (const line of lines.slice(delivered)) {
    const parsed = JobEventSchema.safeParse(safeJson(line));
    if (parsed.success) deliver(parsed.data);
  }
  return { live: coordinatorAlive, events: delivered, ...(ended ? { ended } : {}) };
}

/** Attempts to follow a coordinator that its supervisor is restarting (1.5 s apart). */
const RECONNECTS = 20;

/** The head host's process for the coordinator (the supervisor loop) is still there: a restart is on its way. */
async function supervisorAlive(launcher: Launcher, record: DeployRecord): Promise<boolean> {
  const [head] = (await launcher.status(record.jobId).catch(() => [])).filter((s) => s.target === record.head);
  return head?.processes.some((p) => p.name === 'coordinator' && p.alive) ?? false;
}

async function followLive(launcher: Launcher, record: DeployRecord, deliver: (e: JobEvent) => void, follow: boolean, hasEnded: () => boolean, since: number, signal?: AbortSignal): Promise<void> {
  // The secret lives on the head host (mode 600) while the coordinator runs; it is read over SSH, used
  // for the handshake and kept in memory only.
  const config = await launcher.readJobFile(record.head, record.jobId, 'temp', 'coordinator.config');
  if (config === undefined) throw new Error(`the coordinator of ${record.jobId} has no config file left on ${record.head}`);
  const secret = String((JSON.parse(config) as { secret?: unknown }).secret ?? '');
  // Without follow, the history so far is what the head's events.jsonl holds now (line i = event i):
  // stop at its length, however fast the running job adds events after it.
  const total = follow ? undefined : historyLength(await launcher.readJobFile(record.head, record.jobId, 'run', 'events.jsonl'));
  const forward = await launcher.forward(record.head, record.coordinator.listenHost, record.coordinator.port);
  try {
    // A restarted coordinator replays the whole history (restart.ts): a reconnect asks for what it has not seen.
    await new Promise<void>((resolve, reject) => {
      let quiet: NodeJS.Timeout | undefined;
      let detach: (() => void) | undefined;
      const done = () => {
        clearTimeout(quiet);
        signal?.removeEventListener('abort', done);
        detach?.();
        resolve();
      };
      // Without follow, stop once the replay has gone quiet: the history so far has arrived.
      const rearm = () => {
        if (follow) return;
        clearTimeout(quiet);
        quiet = setTimeout(done, 300);
      };
      let got = since;
      const onEvent = (event: JobEvent) => {
        deliver(event);
        got++;
        if (hasEnded() || (total !== undefined && got >= total)) done();
        else rearm();
      };
      followEvents({ host: forward.host, port: forward.port, secret }, onEvent, done, since).then((d) => {
        detach = d;
        if (total !== undefined && got >= total) return done();
        rearm();
        if (signal?.aborted) return done();
        signal?.addEventListener('abort', done, { once: true });
      }, reject);
    });
  } finally {
    forward.close();
  }
}

/** The events a history file holds: its complete JSON lines (a line a crash cut short is no event). */
function historyLength(text: string | undefined): number | undefined {
  if (text === undefined) return undefined;
  return text.split('\n').filter((l) => l.trim() && safeJson(l) !== null).length;
}

function safeJson(line: string): unknown {
  try {
    return JSON.parse(line);
  } catch {
    return null;
  }
}
