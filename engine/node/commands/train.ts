import { readFileSync } from 'node:fs';
import { resolve } from 'node:path';
import { parseClusterName } from '../../cluster/cluster.js';
import type { ModelGraph } from '../../model/graph.js';
import { loadModel, modelRef } from '../modelRef.js';
import { optimizerFrom, shuffleFrom, trainingSetupFrom, TRAINING_OPTIONS } from '../trainingOptions.js';
import { formatDiagnostics, hasErrors } from '../../plan/diagnostics.js';
import { executionSupport } from '../../plan/executionSupport.js';
import { parsePlan, type Plan } from '../../plan/plan.js';
import { DEFAULT_OPTIMIZER, presetPlan } from '../../plan/presets.js';
import { validatePlan } from '../../plan/validate.js';
import { defaultLocalAgents, LocalJob } from '../jobs/localJob.js';
import { eventPrinter } from './eventPrinter.js';
import { fail } from './fail.js';

export type TrainValues = Record<string, string | boolean | undefined>;

export const TRAIN_USAGE = `shoal train --model <name | path/model.json> [--data mnist | synthetic[:N] | DIR | FILE] [--validation-split F]
            [--loss NAME] [--optimizer sgd|momentum|adam|adamw|rmsprop|adagrad] [--lr X] [--momentum M] [--nesterov]
            [--weight-decay W] [--shuffle true|false] [--cluster local:N] [--plan pp2-dp2 | --plan-file plan.json]
            [--epochs E | --steps S] [--batch B] [--micro-batches M] [--seed N] [--schedule gpipe|1f1b|async]
            [--zero 0|1|2] [--recompute] [--clip-norm X] [--out DIR] [--checkpoint-every N] [--json]

  --model      a built-in model (shoal models) or a tfjs LayersModel's model.json (its weights .bin beside it
               are the starting point; trainable: false layers stay frozen)
  --data DIR   NumPy files: x.npy and y.npy (one input, one output) or <layer>.npy per input and output
               layer ('/' in a name written '__'); DIR/val/ with the same files is the validation set
  --data PATH  also: a .csv/.tsv table, a folder of class folders of .png/.jpg images, a .jsonl of token
               ids, an .npz, or a dataset.json (see the README's "Your data")
  --label-column NAME    a table's label column (default: the last)
  --feature-columns a,b  a table's feature columns (default: every other numeric column)
  --validation-split F   without DIR/val/: hold out a seeded random fraction F for validation
  --loss       categorical_crossentropy, sparse_categorical_crossentropy, binary_crossentropy, mse, mae
               (default: the model file's training_config, else inferred from the output and its head)
  --shuffle false        take batches in file order (Keras's shuffle=False); default: a seeded order per epoch`;

export const TRAIN_OPTIONS = {
  model: { type: 'string' },
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
  'checkpoint-every': { type: 'string' },
  ...TRAINING_OPTIONS,
  help: { type: 'boolean', short: 'h' },
} as const;

export function buildPlan(values: TrainValues, model: ModelGraph = loadModel(String(values.model ?? fail('--model is required: a built-in model (`shoal models`) or a model.json file.')))): Plan {
  if (values['plan-file']) {
    const file = String(values['plan-file']);
    let json: unknown;
    try {
      json = JSON.parse(readFileSync(file, 'utf8'));
    } catch (err) {
      fail(`Cannot read the plan file ${file}: ${(err as Error).message}`);
    }
    return parsePlan(json);
  }
  const number = (key: string) => (values[key] === undefined ? undefined : Number(values[key]));
  const plan = presetPlan(model, String(values.plan ?? 'pp1-dp1'), {
    globalBatch: number('batch'),
    microBatches: number('micro-batches'),
    seed: number('seed'),
    optimizer: optimizerFrom(values, model, values.lr === undefined ? undefined : DEFAULT_OPTIMIZER),
  });
  const shuffle = shuffleFrom(values);
  // Through parsePlan, so a bad value is reported the way a bad plan file would be.
  return parsePlan({
    ...plan,
    model: modelRef(model),
    ...(shuffle === undefined ? {} : { shuffle }),
    ...(values.schedule === undefined ? {} : { schedule: values.schedule }),
    ...(values.zero === undefined ? {} : { zero: number('zero') }),
    ...(values.recompute ? { recompute: true } : {}),
    ...(values['clip-norm'] === undefined ? {} : { gradientClipNorm: number('clip-norm') }),
  });
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
  try {
    model = loadModel(String(values.model ?? fail('--model is required: a built-in model (`shoal models`) or a model.json file.')));
    plan = buildPlan(values, model);
    training = trainingSetupFrom(values, model, plan.seed);
  } catch (err) {
    fail((err as Error).message);
  }
  for (const note of training.notes) process.stderr.write(`shoal: ${note}\n`);
  const cluster = parseClusterName(String(values.cluster ?? 'local'), defaultLocalAgents());
  const steps = values.steps === undefined ? undefined : Number(values.steps);
  const epochs = values.epochs === undefined ? (steps === undefined ? 5 : undefined) : Number(values.epochs);
  const job = new LocalJob({
    model,
    plan,
    training,
    agents: cluster.agents,
    epochs,
    steps,
    runDir: values.out === undefined ? undefined : resolve(String(values.out)),
    checkpointEverySteps: values['checkpoint-every'] === undefined ? undefined : Number(values['checkpoint-every']),
    onEvent: eventPrinter(Boolean(values.json)),
  });
  const stop = () => void job.stop();
  process.once('SIGINT', stop);
  process.once('SIGTERM', stop);
  try {
    const done = job.start();
    if (job.runDir) process.stderr.write(`shoal: job ${job.id}, run folder ${job.runDir} (while it runs: shoal resize ${values.out === undefined ? job.id : job.runDir} --add local:N)\n`);
    await done;
    await job.exited();
  } catch (err) {
    fail((err as Error).message);
  }
}

/** `shoal plan --plan P`: print a preset (or file) plan as JSON and check it against local:N. */
export function printPresetPlan(values: TrainValues): void {
  const model = loadModel(String(values.model ?? fail('--model is required: a built-in model (`shoal models`) or a model.json file.')));
  const plan = buildPlan(values, model);
  const cluster = parseClusterName(String(values.cluster ?? 'local'), defaultLocalAgents());
  process.stdout.write(JSON.stringify(plan, null, 2) + '\n');
  const diagnostics = [...validatePlan(plan, model, cluster.spec), ...executionSupport(plan, model)];
  if (hasErrors(diagnostics)) fail(formatDiagnostics(diagnostics));
  if (diagnostics.length) process.stderr.write(formatDiagnostics(diagnostics) + '\n');
}
