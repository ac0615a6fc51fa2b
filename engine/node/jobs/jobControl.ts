import { connectAuthenticated } from '../../wire/handshake.js';
import { ControlReplySchema, EventFrameSchema, type ControlReply, type ControlRequest } from '../../protocol/controlWire.js';
import type { JobEvent } from '../../protocol/events.js';
import type { CoordinatorHello } from '../../protocol/handshake.js';
import { parseHeader } from '../../protocol/wireHeader.js';

export interface ResizeRequest {
  /** Agents that will join (they connect to the coordinator on their own). */
  add?: number;
  /** Ranks of the current generation to release. */
  remove?: number[];
}

type MembershipEvent = Extract<JobEvent, { type: 'membership' }>;

/**
 * Check a resize against the job's current generation before asking: known ranks only, and someone
 * left to train. (The coordinator would apply whatever it is sent.)
 */
export function checkResize(jobId: string, current: MembershipEvent | undefined, request: ResizeRequest): void {
  const add = request.add ?? 0;
  const remove = request.remove ?? [];
  if (add === 0 && remove.length === 0) throw new Error('Nothing to do: a resize adds agents or removes ranks.');
  if (!current) {
    if (remove.length) throw new Error(`Job ${jobId} has not reported its agents yet (it is starting); remove ranks once it runs.`);
    return;
  }
  const ranks = current.agents.map((a) => a.rank);
  const unknown = remove.filter((r) => !ranks.includes(r));
  if (unknown.length) throw new Error(`Job ${jobId} has no rank ${unknown.join(', ')}; its ranks are ${ranks.join(', ')} (generation ${current.generation}).`);
  if (new Set(remove).size >= ranks.length && add === 0) throw new Error(`Removing rank(s) ${remove.join(', ')} would leave job ${jobId} without agents; stop the job instead.`);
}

export interface CoordinatorAddress {
  host: string;
  port: number;
  secret: string;
}

/**
 * Ask a running coordinator to resize its job at the next step boundary, over an authenticated
 * control connection. Resolves once the request is accepted, with the id the membership event that
 * applies it will carry; rejects with the coordinator's reason.
 */
export async function requestResize(at: CoordinatorAddress, request: ResizeRequest): Promise<string> {
  return sendControl(at, { type: 'resize', add: request.add ?? 0, remove: request.remove ?? [] });
}

/** Ask a running coordinator to save a checkpoint at the next step boundary and stop (Ctrl-C). Resolves once accepted. */
export async function requestCheckpointAndStop(at: CoordinatorAddress): Promise<string> {
  return sendControl(at, { type: 'checkpointAndStop' });
}

/** One control request over its own authenticated connection: the accepted request's id, or the coordinator's reason as an error. */
async function sendControl(at: CoordinatorAddress, request: ControlRequest): Promise<string> {
  const conn = await connectAuthenticated(at.host, at.port, at.secret, { role: 'control' } satisfies CoordinatorHello);
  try {
    const reply = new Promise<ControlReply>((resolve, reject) => {
      conn.onMessage = (m) => {
        try {
          resolve(parseHeader(ControlReplySchema, m.header, `the coordinator at ${at.host}:${at.port}`));
        } catch (err) {
          reject(err as Error);
        }
      };
      conn.onClose = (err) => reject(new Error(`The coordinator closed the control connection: ${err.message}`));
    });
    conn.send(request);
    const answer = await reply;
    if (answer.type !== 'accepted') throw new Error(answer.message);
    return answer.requestId;
  } finally {
    conn.close();
  }
}

/**
 * The one client of a coordinator's event stream (LocalJob, attach, resize): its history from event
 * `since` first, then live events. Returns a function that detaches; `onEnd` is called if the
 * coordinator closes the stream.
 */
export async function followEvents(at: CoordinatorAddress, onEvent: (event: JobEvent) => void, onEnd: (reason: string) => void = () => {}, since = 0): Promise<() => void> {
  const conn = await connectAuthenticated(at.host, at.port, at.secret, { role: 'studio', since } satisfies CoordinatorHello);
  let detached = false;
  conn.onMessage = (m) => {
    const frame = EventFrameSchema.safeParse(m.header);
    if (frame.success) onEvent(frame.data.event);
  };
  conn.onClose = (err) => {
    if (!detached) onEnd(err.message);
  };
  return () => {
    detached = true;
    conn.close();
  };
}
