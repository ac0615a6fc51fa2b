import { AgentLostError } from './generation.js';
import type { Generations } from './generations.js';
import type { JobCheckpoints } from './jobCheckpoints.js';
import { stateFromLocalParts, type JobState } from './jobState.js';
import { describeMember } from './membership.js';
import type { TrainingRun } from './trainingRun.js';

/**
 * Go on without lost agents: discard the step in flight (`at`), rebuild the state from the
 * survivors or, failing that, from the last checkpoint, re-plan onto who is left, and return the
 * step to continue at.
 */
export async function recover(run: TrainingRun, generations: Generations, checkpoints: JobCheckpoints, lost: AgentLostError, at: number, inStep: boolean): Promise<number> {
  const gen = generations.gen;
  const survivors = gen.members.filter((m) => !m.lost);
  const plan = gen.plan;
  gen.close();
  run.say('warn', `${lost.message} ${inStep ? `Discarding step ${at} and going on` : 'Going on'} with ${survivors.length} agent(s).`);
  // A temporary generation of the survivors: abort (close links, undo the step) and report local state.
  const rescue = generations.rescue(plan, survivors);
  await rescue.ask({ type: 'abort', step: at });
  let state: JobState;
  let next = at;
  try {
    state = stateFromLocalParts(await rescue.ask({ type: 'localState' }), plan);
  } catch (err) {
    if (err instanceof AgentLostError) throw err;
    const why = (err as Error).message;
    ({ state, step: next } = checkpoints.fallBack(why, `${lost.message} The job cannot go on: ${why}, and there is no checkpoint to fall back to. Resume it with \`shoal resume\` once enough agents are back.`));
  }
  rescue.close();
  await generations.establish(state, next, `lost ${describeMember(lost.member, lost.rank)}`);
  return next;
}
