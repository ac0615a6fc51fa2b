// Runs of a user's saved model (test/support/userModels.ts) on real agent processes, and the data
// they read, for the parity tests against tfjs's own model.fit.
import { join } from 'node:path';
import type { ModelGraph } from '../../engine/model/graph.js';
import { LocalJob } from '../../engine/node/jobs/localJob.js';
import { loadModel } from '../../engine/node/modelRef.js';
import { trainingSetupFrom } from '../../engine/node/trainingOptions.js';
import { parsePlan, type Plan } from '../../engine/plan/plan.js';
import { presetPlan } from '../../engine/plan/presets.js';
import type { JobEvent } from '../../engine/protocol/events.js';
import { openNpy } from '../../engine/wire/data/npy.js';
import { readParams } from '../integration/paramsFile.js';
import { tf } from './userModels.js';

export interface UserRun {
  /** The trained weights by manifest name (the newest checkpoint). */
  params: Map<string, Float32Array>;
  /** The loss each step reported, in step order. */
  losses: number[];
  runDir: string;
}

/** Train a saved model on local agent processes for `steps` steps; `options` are the CLI's training options (`data`, `validation-split`, …). */
export async function trainUserModel(modelFile: string, options: Record<string, string>, plan: Plan, agents: number, runDir: string, steps: number): Promise<UserRun> {
  const model = loadModel(modelFile);
  const training = trainingSetupFrom(options, model, plan.seed);
  const losses: number[] = [];
  const onEvent = (e: JobEvent) => {
    if (e.type === 'step') losses[e.step] = e.loss;
  };
  const job = new LocalJob({ model, plan, training, agents, steps, runDir, profile: false, onEvent });
  await job.start();
  await job.exited();
  return { params: readParams(join(runDir, 'checkpoints')), losses, runDir };
}

/** A preset plan for a saved model with the tests' batch, seed and plain SGD (what model.fit runs). */
export function userPlan(model: ModelGraph, preset: string, extra: Partial<Plan> = {}): Plan {
  const base = presetPlan(model, preset, { globalBatch: 16, microBatches: 2, seed: 7, optimizer: { kind: 'sgd', learningRate: 0.1, momentum: 0 } });
  return parsePlan({ ...base, model: model.source!.modelFile, shuffle: false, ...extra });
}

/** The first `n` rows of `<dir>/<name>.npy` as a tensor (the data Shoal read, in file order). */
export function npyTensor(dir: string, name: string, n?: number): tf.Tensor {
  const a = openNpy(join(dir, `${name}.npy`));
  const rows = n ?? a.shape[0];
  const out = new Float32Array(rows * a.rowSize);
  a.readRange(0, rows, out);
  a.close();
  return tf.tensor(out, [rows, ...a.shape.slice(1)]);
}
