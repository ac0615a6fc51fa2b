import type { Plan } from '../../plan/plan.js';
import { scheduleTraits } from '../../plan/scheduleTraits.js';
import type { JobEvent } from '../../protocol/events.js';
import type { MembershipEvent } from './controlFile.js';
import { checkResize, requestResize, type CoordinatorAddress, type ResizeRequest } from './jobControl.js';

/** A job's events as a resize watches them; resolves with a function that stops watching. */
export type JobEventSource = (onEvent: (event: JobEvent) => void, onEnd: (reason: string) => void) => Promise<() => void>;

/** What differs between jobs when they are resized: how their events are seen and how new agents start. */
export interface ResizeRoute {
  jobId: string;
  /** Where the control request goes. */
  at: CoordinatorAddress;
  events: JobEventSource;
  /** The generation the request is checked against (after `events` has replayed the history, when it does). */
  current(): MembershipEvent | undefined;
  /** Wait this long after subscribing before checking, for a replay of the history to arrive (removals need it). */
  replayMs?: number;
  /**
   * Start the `add` agents once the coordinator has accepted (they join on their own); `failed` fails
   * the resize, e.g. for an agent that died before it joined.
   */
  startAgents(add: number, failed: (err: Error) => void): Promise<void>;
  onProgress?: (line: string) => void;
}

/** Refuse to resize a job whose schedule has no step boundary to apply a resize at (PipeMare). */
export function checkResizable(jobId: string, schedule: Plan['schedule']): void {
  if (!scheduleTraits(schedule).stepBarrier) throw new Error(`Job ${jobId} runs an asynchronous pipeline, which cannot be resized: its updates in flight have no step boundary to re-map at.`);
}

/**
 * The one resize path of every job — local, detached or on SSH hosts, from the process that runs it
 * or from another: check the request against the job's current generation, ask the coordinator
 * (it applies it at the next step boundary, re-mapping virtual nodes), start the agents that join, and
 * wait for the generation that applies it: the membership event that carries the request's id.
 */
export async function resizeJob(route: ResizeRoute, request: ResizeRequest): Promise<MembershipEvent> {
  const add = request.add ?? 0;
  const remove = request.remove ?? [];
  const id = route.jobId;
  let settle!: (m: MembershipEvent) => void;
  let reject!: (err: Error) => void;
  const applied = new Promise<MembershipEvent>((res, rej) => ((settle = res), (reject = rej)));
  applied.catch(() => {});
  // The generation that applies our request names it (the id the coordinator's acceptance carried).
  let ours: string | undefined;
  const seen: MembershipEvent[] = [];
  // Applied means every live agent trains: agents the new generation could not place fail the resize.
  const answered = (e: MembershipEvent) => {
    const waiting = e.waiting ?? [];
    if (waiting.length === 0) return settle(e);
    reject(new Error(`Job ${id} applied the resize in generation ${e.generation} with ${e.agents.length} agent(s) training, but ${waiting.length} wait (${waiting.map((w) => `${w.host} pid ${w.pid}`).join(', ')}): ${waiting[0].reason}.`));
  };
  const onEvent = (e: JobEvent) => {
    if (e.type === 'membership' && e.requestId !== undefined) {
      seen.push(e);
      if (e.requestId === ours) answered(e);
    } else if (e.type === 'log' && e.requestId !== undefined && e.requestId === ours && e.level !== 'info') {
      reject(new Error(`Job ${id} refused the resize: ${e.message}`));
    } else if (e.type === 'final') reject(new Error(`Job ${id} finished before the resize was applied.`));
    else if (e.type === 'status' && (e.state === 'failed' || e.state === 'stopped')) reject(new Error(`Job ${id} ${e.state} before the resize was applied${e.message ? `: ${e.message.replace(/\.$/, '')}` : ''}.`));
  };
  const detach = await route.events(onEvent, (reason) => reject(new Error(`Lost the connection to the coordinator of job ${id} before the resize was applied: ${reason}`)));
  try {
    if (route.replayMs && remove.length) await new Promise((r) => setTimeout(r, route.replayMs));
    checkResize(id, route.current(), { add, remove });
    ours = await requestResize(route.at, { add, remove });
    const already = seen.find((e) => e.requestId === ours);
    if (already) answered(already);
    route.onProgress?.(`job ${id}: resize accepted (${describeRequest(add, remove)}); waiting for ${add ? 'the new agents to join and train' : 'the next step boundary'}`);
    if (add > 0) await route.startAgents(add, reject);
    return await applied;
  } finally {
    detach();
  }
}

export function describeRequest(add: number, remove: number[]): string {
  return [add ? `add ${add} agent${add === 1 ? '' : 's'}` : '', remove.length ? `remove rank${remove.length === 1 ? '' : 's'} ${remove.join(', ')}` : ''].filter(Boolean).join(', ');
}
