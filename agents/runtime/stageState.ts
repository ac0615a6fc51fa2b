import * as tf from '@tensorflow/tfjs-core';
import type { CheckpointTensor } from '../coordinator/checkpointFile.js';
import type { StageContext } from './stageContext.js';

export interface StageSnapshot {
  tensors: Array<Omit<CheckpointTensor, 'offset' | 'length'>>;
  values: Float32Array;
  optimizerStep: number;
}

/** This stage's parameters and optimizer slots, named, as one flat array (for a checkpoint). */
export function snapshotStage(ctx: StageContext): StageSnapshot {
  const { module, optimizer } = ctx;
  const state = optimizer.exportState();
  const tensors: StageSnapshot['tensors'] = [];
  const parts: Float32Array[] = [];
  module.paramSpecs.forEach((spec, i) => {
    tensors.push({ name: spec.name, shape: spec.shape });
    parts.push(module.params[i].dataSync() as Float32Array);
    for (const [slot, arrays] of Object.entries(state.slots)) {
      tensors.push({ name: spec.name, slot, shape: spec.shape });
      parts.push(arrays[i]);
    }
  });
  const values = new Float32Array(parts.reduce((n, p) => n + p.length, 0));
  let at = 0;
  for (const p of parts) {
    values.set(p, at);
    at += p.length;
  }
  return { tensors, values, optimizerStep: state.step };
}

/**
 * Load parameters and optimizer slots by name, so a checkpoint written under one plan restores under
 * another (different stage cuts or replica counts): each stage takes the tensors it now owns.
 */
export function restoreStage(ctx: StageContext, tensors: CheckpointTensor[], body: Float32Array, optimizerStep: number): void {
  const { module, optimizer } = ctx;
  const find = (name: string, slot?: string) => tensors.find((t) => t.name === name && t.slot === slot);
  const slots: Record<string, Float32Array[]> = {};
  module.paramSpecs.forEach((spec, i) => {
    const value = find(spec.name);
    if (!value) throw new Error(`The checkpoint has no parameter "${spec.name}"; it was written for another model.`);
    if (value.length !== module.params[i].size) {
      throw new Error(`Parameter "${spec.name}" has ${value.length} values in the checkpoint but ${module.params[i].size} in the model.`);
    }
    module.params[i].assign(tf.tensor(body.subarray(value.offset, value.offset + value.length), spec.shape, 'float32'));
    for (const t of tensors.filter((x) => x.name === spec.name && x.slot)) {
      (slots[t.slot!] ??= []).push(body.slice(t.offset, t.offset + t.length));
    }
  });
  const complete = Object.fromEntries(Object.entries(slots).filter(([, arrays]) => arrays.length === module.params.length));
  optimizer.importState({ step: optimizerStep, slots: complete }, module.params);
}
