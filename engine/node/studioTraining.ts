import { homedir } from 'node:os';
import { isAbsolute, join } from 'node:path';
import type { ModelGraph } from '../model/graph.js';
import type { Plan } from '../plan/plan.js';
import type { DataRef, TrainingSetup } from '../protocol/trainingSetup.js';
import { isImportedModelFile, modelsRoot } from './modelImport.js';
import { isModelFile, loadModel } from './modelRef.js';
import { trainingSetupFor } from './trainingOptions.js';

/**
 * What the studio's Train and Deploy run: the model the plan names (a zoo name, or a model.json the studio
 * imported into its model store) and its data and losses, checked against the model before any
 * process starts. Every refusal says what to change in the studio.
 */
export function studioTraining(plan: Plan, data: DataRef | undefined, loss: string | undefined): { model: ModelGraph; training: TrainingSetup; notes: string[] } {
  if (isModelFile(plan.model) && !isImportedModelFile(plan.model)) {
    throw new Error(`The studio trains model files it imported (under ${modelsRoot()}); ${plan.model} is not one. Open its model.json in the studio (Open model.json…, with its .bin files) and train that.`);
  }
  const model = loadModel(plan.model);
  if (!data && model.source) throw new Error(`Model "${model.name}" needs data: choose a Dataset (file or folder), a NumPy folder or Synthetic under Data in the plan panel.`);
  let ref: DataRef = data ?? { kind: 'mnist' };
  if (ref.kind === 'npy') {
    const typed = ref.dir.trim();
    const dir = typed.startsWith('~/') ? join(homedir(), typed.slice(2)) : typed;
    if (!isAbsolute(dir)) throw new Error(`The data folder "${ref.dir}" is not a full path: give the folder's full path on this machine (e.g. /home/me/data or ~/data).`);
    ref = { ...ref, dir };
  }
  // A dataset (what the Data section's inspection resolved) is opened again here, by the readers the
  // agents use: the file may have changed since it was inspected.
  if (ref.kind === 'dataset' && !isAbsolute(ref.dataset.source) && !ref.dataset.source.startsWith('~/')) {
    throw new Error(`The dataset path "${ref.dataset.source}" is not a full path: give the file or folder's full path on this machine under Data in the plan panel.`);
  }
  const { notes, ...training } = trainingSetupFor(model, ref, loss, plan.seed);
  return { model, training, notes };
}
