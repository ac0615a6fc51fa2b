import { resolve } from 'node:path';
import { datasetLine, readDatasetRecord } from '../jobs/datasetRecord.js';
import type { ModelGraph } from '../../model/graph.js';
import { layersOption, loadModel, modelRef, openModel } from '../modelRef.js';
import { optimizerFrom, shuffleFrom, trainingSetupFrom, TRAINING_OPTIONS } from '../trainingOptions.js';
import { formatDiagnostics, hasErrors } from '../../plan/diagnostics.js';
import { agentsNeeded, parsePlan, type Plan } from '../../plan/plan.js';
import { DEFAULT_OPTIMIZER, presetPlan } from '../../plan/presets.js';
import { planDiagnostics } from '../jobs/jobPreflight.js';
import { defaultLocalAgents, LocalJob } from '../jobs/localJob.js';
import { eventPrinter } from './eventPrinter.js';
import { fail, failUsage } from './fail.js';
import { checkpointOnInterrupt, exitIfInterrupted } from './interrupt.js';
import { readJsonFile } from './inputFiles.js';
import { intOption, localClusterOption, numberOption, OptionError } from './optionValues.js';
import { assertRunFolderUsable } from '../jobs/runFolderGuard.js';
import { planFileConflicts } from './planFileFlags.js';
import { LIMITS } from '../../plan/limits.js';

export type TrainValues = Record<string, string | boolean | undefined>;

export const TRAIN_USAGE = `shoal train --model <name | path/model.json> [--data mnist | synthetic[:N] | DIR | FILE] [--validation-split F] [--validation-holdout last|seeded-random]
            [--loss NAME] [--optimizer sgd|momentum|adam|adamw|rmsprop|adagrad] [--lr X] [--momentum M] [--nesterov]
            [--weight-decay W] [--shuffle true|false] [--cluster local:N] [--plan pp2-dp2 | --plan-file plan.json]
            [--epochs E | --steps S] [--batch B] [--micro-batches M] [--seed N] [--schedule gpipe|1f1b|async]
            [--zero 0|1|2] [--recompute] [--clip-norm X] [--out DIR [--overwrite]] [--eval-every N]
            [--checkpoint-every N] [--json]

  --model      a built-in model (shoal models) or a tfjs LayersModel's model.json (its weights .bin beside it
               are the starting point; trainable: false layers stay frozen)
  --layers FILE          your own layer classes: a JavaScript module (CommonJS or ES) exporting register(tf),
               which defines them and registers each with tf.serialization.registerClass
  --data DIR   NumPy files: x.npy and y.npy (one input, one output) or <layer>.npy per input and output
               layer ('/' in a name written '__'); DIR/val/ with the same files is the validation set
  --data PATH  also: a .csv/.tsv table, a folder of class folders of .png/.jpg images, a .jsonl of token
               ids, an .npz, or a dataset.json (see the README's "Your data")
  --label-column NAME    a table's label column (default: the last)
  --feature-columns a,b  a table's feature columns (default: every other numeric column)
  --validation-split F   without DIR/val/: hold out the last fraction F of the rows for validation (as
               model.fit's validationSplit)
  --validation-holdout last|seeded-random   which rows --validation-split takes: the last (default) or a
               random fraction drawn from --seed (for files sorted by class or time)
  --loss       categorical_crossentropy, sparse_categorical_crossentropy, binary_crossentropy, mse, mae
               (default: the model file's training_config, else inferred from the output and its head)
  --shuffle false        take batches in file order (Keras's shuffle=False); default: a seeded order per epoch
  --out DIR    the run's folder: new or empty (an earlier run there is refused, naming it and how to resume it)
  --overwrite  replace the earlier run in --out (its records and checkpoints; other files there stay)
  --eval-every N         evaluate the validation set every N steps (default: once per epoch; always after the last)`;

export const TRAIN_OPTIONS = {
  model: { type: 'string' },
  layers: { type: 'string' },
  cluster: { type: 'string' },
  plan: { type: 'string' },
  'plan-file': { type: 'string' },
  epochs: { type: 'string' },
  steps: { type: 'string' },
  batch: { type: 'string' },
  'micro-batches': { type: 'string' },
  lr: { type: 'string' },
  seed: { type: 'string' },
  schedule: { type: 'string' },
  zero: { type: 'string' },
  recompute: { type: 'boolean' },
  'clip-norm': { type: 'string' },
  json: { type: 'boolean' },
  out: { type: 'string' },
  overwrite: { type: 'boolean' },
  'checkpoint-every': { type: 'string' },
  'eval-every': { type: 'string' },
  ...TRAINING_OPTIONS,
  help: { type: 'boolean', short: 'h' },
} as const;

export function buildPlan(values: TrainValues, model: ModelGraph = loadModel(String(values.model ?? fail('--model is required: a built-in model (`shoal models`) or a model.json file.')))): Plan {
  if (values['plan-file']) {
    const file = String(values['plan-file']);
    let plan: Plan;
    try {
      plan = parsePlan(readJsonFile(file, 'plan'));
    } catch (err) {
      const message = (err as Error).message;
      throw new Error(message.includes(file) ? message : `--plan-file ${file}: ${message}`);
    }
    // A flag beside --plan-file that says otherwise is refused rather than silently ignored.
    const conflicts = planFileConflicts(values, plan, modelRef(model));
    if (conflicts.length) throw new Error(`--plan-file ${String(values['plan-file'])} and the options disagree:\n  ${conflicts.join('\n  ')}\nDrop those options, or edit the plan file.`);
    return plan;
  }
  const plan = presetPlan(model, String(values.plan ?? 'pp1-dp1'), {
    globalBatch: intOption(values, 'batch', { example: '64' }),
    microBatches: intOption(values, 'micro-batches', { example: '4' }),
    seed: intOption(values, 'seed', { min: 0, example: '42' }),
    optimizer: optimizerFrom(values, model, values.lr === undefined ? undefined : DEFAULT_OPTIMIZER),
  });
  const shuffle = shuffleFrom(values);
  // Through parsePlan, so a bad value is reported the way a bad plan file would be.
  return parsePlan({
    ...plan,
    model: modelRef(model),
    ...(shuffle === undefined ? {} : { shuffle }),
    ...(values.schedule === undefined ? {} : { schedule: values.schedule }),
    ...(values.zero === undefined ? {} : { zero: intOption(values, 'zero', { min: 0, max: 3 }) }),
    ...(values.recompute ? { recompute: true } : {}),
    ...(values['clip-norm'] === undefined ? {} : { gradientClipNorm: numberOption(values, 'clip-norm', { above: 0, example: '1.0' }) }),
  });
}

/** How long to train: --steps (whole, ≥ 1) or --epochs (a positive number, 5 by default). */
export function runLength(values: TrainValues): { steps?: number; epochs?: number } {
  const steps = intOption(values, 'steps', { max: LIMITS.steps, example: '100' });
  // An upper bound for the epochs themselves; the steps they come to are checked against the data (jobPreflight.ts).
  const epochs = numberOption(values, 'epochs', { above: 0, max: LIMITS.steps, example: '5' });
  if (steps !== undefined && epochs !== undefined) throw new Error('--steps and --epochs both say how long to train: give one of them.');
  return steps !== undefined ? { steps } : { epochs: epochs ?? 5 };
}

/** --out (checked as the job will use it: runFolderGuard.ts) and --overwrite, which needs it. */
export function runFolderOption(values: TrainValues): string | undefined {
  if (values.out === undefined) {
    if (values.overwrite) throw new OptionError('--overwrite replaces the run in --out DIR: give --out too.');
    return undefined;
  }
  if (typeof values.out !== 'string' || values.out.trim() === '') {
    throw new OptionError('--out is empty: give the folder for the run (new or empty), or leave --out out for one under the runs folder.');
  }
  const dir = resolve(values.out);
  assertRunFolderUsable(dir, { overwrite: values.overwrite === true });
  return dir;
}

/** `shoal train`: run a plan on local agents, printing events (JSON lines with --json). */
export async function runTrain(values: TrainValues): Promise<void> {
  if (values.help) {
    process.stdout.write(TRAIN_USAGE + '\n');
    return;
  }
  let model: ModelGraph;
  let plan: Plan;
  let training: ReturnType<typeof trainingSetupFrom>;
  let length: ReturnType<typeof runLength>;
  let checkpointEverySteps: number | undefined;
  let evalEverySteps: number | undefined;
  let cluster: ReturnType<typeof localClusterOption>;
  let runDir: string | undefined;
  try {
    // Every option is checked before the model is read or any process starts.
    length = runLength(values);
    runDir = runFolderOption(values);
    checkpointEverySteps = intOption(values, 'checkpoint-every', { max: LIMITS.steps, example: '100' });
    evalEverySteps = intOption(values, 'eval-every', { max: LIMITS.steps, example: '50' });
    model = await openModel(String(values.model ?? fail('--model is required: a built-in model (`shoal models`) or a model.json file.')), layersOption(values));
    plan = buildPlan(values, model);
    // Without --cluster the plan is checked on as many local agents as it needs (at least the default),
    // so printing pp2-dp2 works on a 2-core machine; the warning says when that oversubscribes the cores.
    const where = values.cluster === undefined ? `local:${Math.max(agentsNeeded(plan), defaultLocalAgents())}` : String(values.cluster);
    cluster = localClusterOption(where, defaultLocalAgents(), (line) => process.stderr.write(`shoal: warning: ${line}\n`));
    training = trainingSetupFrom(values, model, plan.seed);
  } catch (err) {
    fail((err as Error).message);
  }
  for (const note of training.notes) process.stderr.write(`shoal: ${note}\n`);
  const { steps, epochs } = length;
  const printEvent = eventPrinter(Boolean(values.json), training.validationSamples);
  let datasetShown = false;
  const job = new LocalJob({
    model,
    plan,
    training,
    agents: cluster.agents,
    epochs,
    steps,
    runDir,
    overwrite: values.overwrite === true,
    checkpointEverySteps,
    evalEverySteps,
    onEvent: (event) => {
      // job.json is written as the processes start: say which data it records once it is there.
      if (!datasetShown) {
        const dataset = readDatasetRecord(job.runDir);
        if (dataset) process.stderr.write(`shoal: ${datasetLine(dataset)}\n`);
        datasetShown = !!dataset || event.type === 'final';
      }
      printEvent(event);
    },
  });
  // Ctrl-C saves a checkpoint first (interrupt.ts); the command then exits 130.
  const interrupts = checkpointOnInterrupt(job, (line) => process.stderr.write(`shoal: ${line}\n`));
  try {
    const done = job.start();
    if (job.runDir) process.stderr.write(`shoal: job ${job.id}, run folder ${job.runDir} (while it runs: shoal resize ${values.out === undefined ? job.id : job.runDir} --add local:N)\n`);
    await done;
    await job.exited();
  } catch (err) {
    await exitIfInterrupted(job, interrupts);
    fail((err as Error).message);
  }
}

/** Options of shoal train that say how to run a job, which printing a plan has no use for. */
const TRAIN_ONLY_OPTIONS = ['epochs', 'steps', 'out', 'overwrite', 'checkpoint-every', 'eval-every'] as const;

/** `shoal plan --plan P`: print a preset (or file) plan as JSON and check it against local:N. */
export async function printPresetPlan(values: TrainValues): Promise<void> {
  let model: ModelGraph;
  let plan: Plan;
  let cluster: ReturnType<typeof localClusterOption>;
  const trainOnly = TRAIN_ONLY_OPTIONS.filter((key) => values[key] !== undefined);
  if (trainOnly.length) failUsage(`shoal plan prints and checks a plan; ${trainOnly.map((k) => `--${k}`).join(', ')} ${trainOnly.length > 1 ? 'are' : 'is'} for shoal train. Drop ${trainOnly.length > 1 ? 'them' : 'it'}.`);
  try {
    model = await openModel(String(values.model ?? fail('--model is required: a built-in model (`shoal models`) or a model.json file.')), layersOption(values));
    plan = buildPlan(values, model);
    // Without --cluster the plan is checked on as many local agents as it needs (at least the default),
    // so printing pp2-dp2 works on a 2-core machine; the warning says when that oversubscribes the cores.
    const where = values.cluster === undefined ? `local:${Math.max(agentsNeeded(plan), defaultLocalAgents())}` : String(values.cluster);
    cluster = localClusterOption(where, defaultLocalAgents(), (line) => process.stderr.write(`shoal: warning: ${line}\n`));
  } catch (err) {
    fail((err as Error).message);
  }
  process.stdout.write(JSON.stringify(plan, null, 2) + '\n');
  // The checks a job of this plan would pass before it starts, its memory per device included.
  const diagnostics = planDiagnostics(plan, model, cluster.spec);
  if (hasErrors(diagnostics)) fail(formatDiagnostics(diagnostics));
  if (diagnostics.length) process.stderr.write(formatDiagnostics(diagnostics) + '\n');
}
