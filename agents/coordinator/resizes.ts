import type { Generations } from './generations.js';
import type { JobCheckpoints } from './jobCheckpoints.js';
import { placedAgents } from './generations.js';
import { now, type ResizeRequest, type TrainingRun } from './trainingRun.js';

/** Resize requests (`shoal resize`, the studio), applied at step boundaries while every agent is alive. */
export class Resizes {
  constructor(
    private readonly run: TrainingRun,
    private readonly generations: Generations,
    private readonly checkpoints: JobCheckpoints,
  ) {}

  /**
   * The oldest resize request, once it can be applied: training goes on while the agents it adds
   * start and join (every agent that joined since it was accepted counts, lost or not: a loss is
   * recovered on its own). One whose agents do not come within the round timeout is refused, said
   * so in a log event carrying its id, which the requester waits for as it waits for the membership.
   */
  due(): ResizeRequest | null {
    const { job, timeoutSec, say } = this.run;
    const request = job.resizes[0];
    if (!request) return null;
    request.since ??= now();
    request.joinedBefore ??= job.membership.members.length;
    const joined = job.membership.members.length - request.joinedBefore;
    if (joined >= request.add) return job.resizes.shift()!;
    if (now() - request.since > timeoutSec * 1000) {
      job.resizes.shift();
      say('warn', `Resize refused: only ${joined} of ${request.add} new agent(s) joined within ${timeoutSec} s. Check their logs.`, request.id);
    }
    return null;
  }

  /**
   * Apply a resize before step `step`: every live agent but the released ranks, re-planned for all of
   * them (Generations.establish); the state is handed over peer to peer, so nothing is lost. Agents
   * that joined already train when a recovery took them in first: the request is then answered by the
   * running generation. Returns the step to continue at.
   */
  async apply(request: ResizeRequest, step: number): Promise<number> {
    const { job, log } = this.run;
    const gen = this.generations.gen;
    const released = new Set(request.remove.map((rank) => gen.members[rank]).filter((m) => m !== undefined));
    const team = job.membership.alive().filter((m) => !released.has(m));
    const change = [request.add ? `+${request.add}` : '', request.remove.length ? `−rank ${request.remove.join(', ')}` : ''].filter(Boolean).join(' ');
    if (released.size === 0 && team.length === gen.members.length && team.every((m) => gen.members.includes(m))) {
      log.emit({ type: 'membership', generation: gen.id, step, reason: `resize: ${change} (every live agent already trains in generation ${gen.id})`, requestId: request.id, agents: placedAgents(gen), ...this.generations.outside() });
      return step;
    }
    const state = await this.checkpoints.holdSnapshot(gen);
    const at = await this.generations.establish(state, step, `resize: ${change}`, { exclude: released, requestId: request.id });
    // Released agents go once their state (if they held some) has been handed over.
    for (const m of released) m.conn.send({ type: 'shutdown' });
    return at;
  }
}
