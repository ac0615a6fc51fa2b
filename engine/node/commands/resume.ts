import { parseArgs } from 'node:util';
import { readCheckpoint } from '../../wire/checkpointFile.js';
import { loadModel } from '../modelRef.js';
import { parsePlan } from '../../plan/plan.js';
import { presetPlan } from '../../plan/presets.js';
import { defaultLocalAgents, LocalJob } from '../jobs/localJob.js';
import { checkedSteps } from '../jobs/jobPreflight.js';
import { findResumePoint } from '../jobs/runStore.js';
import { pullNewestCheckpoint } from '../jobs/pullCheckpoint.js';
import { eventPrinter } from './eventPrinter.js';
import { checkpointOnInterrupt, exitIfInterrupted } from './interrupt.js';
import { intOption, localClusterOption } from './optionValues.js';
import { LIMITS } from '../../plan/limits.js';
import { runLength } from './train.js';
import { onePositional } from './usage.js';

export const RESUME_USAGE = `shoal resume <run-id | run folder | file.ckpt> [--cluster local:N] [--plan pp2-dp2]
             [--steps S | --epochs E] [--checkpoint-every N] [--json]`;

/**
 * `shoal resume`: continue a run from its newest checkpoint (or a given one) — after a crash, a stop,
 * or to train longer. The plan may change (another preset, more or fewer agents): parameters and
 * optimizer state are restored by name. The step counter and so the data order continue.
 */
export async function runResume(args: string[]): Promise<void> {
  const { values, positionals } = parseArgs({
    args,
    options: {
      cluster: { type: 'string' },
      plan: { type: 'string' },
      steps: { type: 'string' },
      epochs: { type: 'string' },
      'checkpoint-every': { type: 'string' },
      json: { type: 'boolean' },
    },
    allowPositionals: true,
  });
  const target = onePositional(positionals, 'the run to resume (a run id, run folder or checkpoint file)', `Usage: ${RESUME_USAGE}`);
  // Checked before the checkpoint is read: "--steps abc" is an error, never NaN steps.
  const length = runLength(values);
  const checkpointEverySteps = intOption(values, 'checkpoint-every', { max: LIMITS.steps, example: '100' });
  // A deployed job's checkpoints are on its head host: the newest comes home first.
  await pullNewestCheckpoint(target, (line) => process.stderr.write(`shoal: ${line}\n`));
  const point = findResumePoint(target);
  const { header } = readCheckpoint(point.checkpoint);
  const model = loadModel(header.model);
  const training = point.record?.training;
  const previous = parsePlan(header.plan);
  // Another layout may be chosen, but never other hyperparameters: batch, optimizer and seed stay.
  const plan = values.plan ? presetPlan(model, values.plan, { globalBatch: previous.globalBatch, optimizer: previous.optimizer, seed: previous.seed }) : previous;
  // --steps and --epochs count from the run's start; without them, the run's own length (or one epoch more).
  const perEpoch = checkedSteps(plan, { epochs: 1 }, training);
  const steps = values.steps !== undefined || values.epochs !== undefined ? checkedSteps(plan, length, training) : (point.record?.steps ?? header.step + perEpoch);
  if (steps <= header.step) {
    throw new Error(`Checkpoint ${point.checkpoint} is at step ${header.step}, and the run was asked for ${steps} steps: nothing left to do. Pass --steps or --epochs to train longer.`);
  }
  const cluster = localClusterOption(values.cluster ?? `local:${point.record?.agents ?? defaultLocalAgents()}`, defaultLocalAgents(), (line) => process.stderr.write(`shoal: warning: ${line}\n`));
  const job = new LocalJob({
    model,
    plan,
    training,
    agents: cluster.agents,
    steps,
    runDir: point.runDir,
    resumeFrom: point.checkpoint,
    checkpointEverySteps,
    onEvent: eventPrinter(Boolean(values.json), training?.validationSamples),
  });
  // Ctrl-C saves a checkpoint first (interrupt.ts); the command then exits 130.
  const interrupts = checkpointOnInterrupt(job, (line) => process.stderr.write(`shoal: ${line}\n`));
  try {
    await job.start();
    await job.exited();
  } catch (err) {
    await exitIfInterrupted(job, interrupts);
    throw err;
  }
}
