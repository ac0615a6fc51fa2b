import { replan } from '../../engine/plan/elastic.js';
import type { Generations } from './generations.js';
import type { JobCheckpoints } from './jobCheckpoints.js';
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
   * start and join. One whose agents do not come within the round timeout is dropped, said so.
   */
  due(): ResizeRequest | null {
    const { job, timeoutSec, say } = this.run;
    const request = job.resizes[0];
    if (!request) return null;
    request.since ??= now();
    const joined = this.generations.newcomers().length;
    if (joined >= request.add) return job.resizes.shift()!;
    if (now() - request.since > timeoutSec * 1000) {
      job.resizes.shift();
      say('warn', `Resize dropped: only ${joined} of ${request.add} new agent(s) joined within ${timeoutSec} s. Check their logs.`);
    }
    return null;
  }

  /** Apply a resize before step `step`: the state is handed over peer to peer, so nothing is lost. Returns the step to continue at. */
  async apply(request: ResizeRequest, step: number): Promise<number> {
    const { job, config } = this.run;
    const gen = this.generations.gen;
    const staying = gen.members.filter((_, rank) => !request.remove.includes(rank));
    const members = [...staying, ...this.generations.newcomers().slice(0, request.add)];
    const plan = replan(job.plan, config.model, members.length);
    const state = await this.checkpoints.holdSnapshot(gen);
    const released = gen.members.filter((m) => !members.includes(m));
    const change = [request.add ? `+${request.add}` : '', request.remove.length ? `−rank ${request.remove.join(', ')}` : ''].filter(Boolean).join(' ');
    const at = await this.generations.establish(state, step, `resize: ${change}`, plan, members, request.id);
    // Released agents go once their state (if they held some) has been handed over.
    for (const m of released) m.conn.send({ type: 'shutdown' });
    return at;
  }
}
