import * as tf from '@tensorflow/tfjs-core';
import type { CheckpointTensor } from '../../engine/wire/checkpointFile.js';
import { placeSlice, sliceAxis, type ShardedParamSpec } from '../exec/tensorParallel/shardedParams.js';
import type { TensorGroup } from '../exec/tensorParallel/tensorGroup.js';
import type { StageContext } from './stageContext.js';

export interface StageSnapshot {
  tensors: Array<Omit<CheckpointTensor, 'offset' | 'length'>>;
  values: Float32Array;
  optimizerStep: number;
}

/** The whole tensor from every shard's slice (collective: every shard of the group calls it). */
async function wholeTensor(group: TensorGroup | null, spec: ShardedParamSpec, mine: Float32Array): Promise<Float32Array> {
  if (!group || !spec.split) return mine;
  const { axis, parts, fullShape } = spec.split;
  const slices = await group.allGatherVectors(mine);
  const whole = new Float32Array(fullShape.reduce((a, b) => a * b, 1));
  slices.forEach((slice, k) => placeSlice(whole, slice, fullShape, axis, parts, k));
  return whole;
}

/**
 * This stage's parameters and optimizer slots, named and whole, as one flat array (for a checkpoint).
 * Every agent of the stage must call it — tensor-parallel shards gather their slices — and the first
 * shard of the first replica returns the snapshot (every replica holds the same state); others null.
 */
export async function snapshotStage(ctx: StageContext): Promise<StageSnapshot | null> {
  const { module, tensorGroup } = ctx;
  if (tensorGroup) tensorGroup.phase = 'snapshot';
  const state = ctx.gradientSync ? await ctx.gradientSync.gatherState() : ctx.optimizer!.exportState();
  const tensors: StageSnapshot['tensors'] = [];
  const parts: Float32Array[] = [];
  for (const [i, spec] of module.paramSpecs.entries()) {
    const shape = spec.split?.fullShape ?? spec.shape;
    tensors.push({ name: spec.name, shape });
    parts.push(await wholeTensor(tensorGroup, spec, module.params[i].dataSync() as Float32Array));
    for (const [slot, arrays] of Object.entries(state.slots)) {
      tensors.push({ name: spec.name, slot, shape });
      parts.push(await wholeTensor(tensorGroup, spec, arrays[i]));
    }
  }
  // Weights without gradients (batch-norm statistics, frozen layers) are saved too, without slots.
  for (const { name, variable } of ctx.graphStage?.stateWeights() ?? []) {
    tensors.push({ name, shape: variable.shape });
    parts.push(variable.dataSync() as Float32Array);
  }
  if (ctx.me.replica !== 0 || ctx.me.shard !== 0) return null;
  const values = new Float32Array(parts.reduce((n, p) => n + p.length, 0));
  let at = 0;
  for (const p of parts) {
    values.set(p, at);
    at += p.length;
  }
  return { tensors, values, optimizerStep: state.step };
}

/** This shard's part of a whole tensor from a checkpoint. */
function ownPart(spec: ShardedParamSpec, whole: Float32Array): Float32Array {
  if (!spec.split) return whole.slice();
  const { axis, parts, index, fullShape } = spec.split;
  return sliceAxis(whole, fullShape, axis, parts, index);
}

/**
 * Load parameters and optimizer slots by name, so a checkpoint written under one plan restores under
 * another (different stage cuts, replica counts or sharding): each agent takes the tensors, or the
 * slices of them, it now owns.
 */
export function restoreStage(ctx: StageContext, tensors: CheckpointTensor[], body: Float32Array, optimizerStep: number): void {
  const { module } = ctx;
  const find = (name: string, slot?: string) => tensors.find((t) => t.name === name && t.slot === slot);
  const slots: Record<string, Float32Array[]> = {};
  module.paramSpecs.forEach((spec, i) => {
    const value = find(spec.name);
    if (!value) throw new Error(`The checkpoint has no parameter "${spec.name}"; it was written for another model.`);
    const wholeSize = (spec.split?.fullShape ?? spec.shape).reduce((a, b) => a * b, 1);
    if (value.length !== wholeSize) {
      throw new Error(`Parameter "${spec.name}" has ${value.length} values in the checkpoint but ${wholeSize} in the model.`);
    }
    module.params[i].assign(tf.tensor(ownPart(spec, body.subarray(value.offset, value.offset + value.length)), spec.shape, 'float32'));
    for (const t of tensors.filter((x) => x.name === spec.name && x.slot)) {
      (slots[t.slot!] ??= []).push(ownPart(spec, body.subarray(t.offset, t.offset + t.length)));
    }
  });
  for (const { name, variable } of ctx.graphStage?.stateWeights() ?? []) {
    const value = find(name);
    if (!value) throw new Error(`The checkpoint has no weight "${name}"; it was written for another model.`);
    variable.assign(tf.tensor(body.subarray(value.offset, value.offset + value.length), variable.shape, 'float32'));
  }
  const complete = Object.fromEntries(Object.entries(slots).filter(([, arrays]) => arrays.length === module.params.length));
  const state = { step: optimizerStep, slots: complete };
  if (ctx.gradientSync) ctx.gradientSync.importState(state);
  else ctx.optimizer!.importState(state, module.params);
}
