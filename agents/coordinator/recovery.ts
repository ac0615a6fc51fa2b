import { AgentLostError } from './generation.js';
import type { Generations } from './generations.js';
import type { JobCheckpoints } from './jobCheckpoints.js';
import { stateFromLocalParts, type JobState } from './jobState.js';
import { describeMember, type Member } from './membership.js';
import type { TrainingRun } from './trainingRun.js';

/**
 * Go on without lost agents: discard the step in flight (`at`), rebuild the state from the
 * survivors or, failing that, from the last checkpoint, re-plan onto who is left, and return the
 * step to continue at. An agent lost while this runs — two at once, or one more during the rescue
 * — only shrinks the survivors: the rescue starts again with those left (undoing a step is
 * idempotent), and setting up the new generation retries on its own (Generations.establish). A job
 * that cannot go on fails; the coordinator's message then names the checkpoint to resume from, if any.
 */
export async function recover(run: TrainingRun, generations: Generations, checkpoints: JobCheckpoints, lost: AgentLostError, at: number, inStep: boolean): Promise<number> {
  const gen = generations.gen;
  let survivors = gen.members.filter((m) => !m.lost);
  const plan = gen.plan;
  gen.close();
  run.say('warn', `${lost.message} ${inStep ? `Discarding step ${at} and going on` : 'Going on'} with ${survivors.length} agent(s).`);
  let gathered: { state: JobState; step: number } | null = null;
  while (!gathered) {
    try {
      gathered = await rescue(run, generations, checkpoints, plan, survivors, lost, at);
    } catch (err) {
      if (!(err instanceof AgentLostError)) throw err;
      survivors = survivors.filter((m) => !m.lost);
      run.say('warn', `${err.message} while the job recovered; going on with ${survivors.length} agent(s).`);
      if (survivors.length === 0) throw new Error(`${err.message} No agent is left to recover the job with.`);
    }
  }
  await generations.establish(gathered.state, gathered.step, `lost ${describeMember(lost.member, lost.rank)}`);
  return gathered.step;
}

/**
 * A temporary generation of the survivors: abort (close links, undo the step) and report their
 * local state; when no survivor holds some stage, the job falls back to its newest checkpoint.
 */
async function rescue(run: TrainingRun, generations: Generations, checkpoints: JobCheckpoints, plan: TrainingRun['job']['plan'], survivors: Member[], lost: AgentLostError, at: number): Promise<{ state: JobState; step: number }> {
  const temporary = generations.rescue(plan, survivors);
  try {
    await temporary.ask({ type: 'abort', step: at });
    try {
      return { state: stateFromLocalParts(await temporary.ask({ type: 'localState' }), plan), step: at };
    } catch (err) {
      if (err instanceof AgentLostError) throw err;
      const why = (err as Error).message;
      return checkpoints.fallBack(why, `${lost.message} The job cannot go on: ${why}, and there is no checkpoint to fall back to.`);
    }
  } finally {
    temporary.close();
  }
}
