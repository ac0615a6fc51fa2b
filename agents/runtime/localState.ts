import type { CheckpointTensor } from '../../engine/wire/checkpointFile.js';
import type { StageContext } from './stageContext.js';
import { shardsOptimizerState } from '../../engine/plan/scheduleTraits.js';

export interface LocalState {
  /** This agent's tensors as it holds them: its slice where split (`split` says which), its optimizer slots. */
  tensors: Array<Omit<CheckpointTensor, 'offset' | 'length'> & { split?: { axis: number; parts: number; index: number; fullShape: number[] } }>;
  values: Float32Array;
  optimizerStep: number;
  /** False when the optimizer state is sharded over the data-parallel group (ZeRO): only parameters are here. */
  complete: boolean;
}

/**
 * What this agent alone holds, without any collective: after a peer is lost the links are closed,
 * and the coordinator rebuilds the job's state from the survivors' parts (a tensor-parallel slice
 * from whichever replica still has it). Under ZeRO the optimizer state is spread over the replicas,
 * so a lost replica's part is gone: `complete` says so, and the coordinator falls back to a checkpoint.
 */
export function localState(ctx: StageContext): LocalState {
  const { module, gradientSync, optimizer } = ctx;
  const state = shardsOptimizerState(ctx.plan) ? null : gradientSync ? gradientSync.exportLocalState() : optimizer!.exportState();
  const tensors: LocalState['tensors'] = [];
  const parts: Float32Array[] = [];
  module.paramSpecs.forEach((spec, i) => {
    tensors.push({ name: spec.name, shape: spec.shape, split: spec.split });
    parts.push(module.params[i].dataSync() as Float32Array);
    for (const [slot, arrays] of Object.entries(state?.slots ?? {})) {
      tensors.push({ name: spec.name, slot, shape: spec.shape, split: spec.split });
      parts.push(arrays[i]);
    }
  });
  for (const { name, variable } of ctx.graphStage?.stateWeights() ?? []) {
    tensors.push({ name, shape: variable.shape });
    parts.push(variable.dataSync() as Float32Array);
  }
  const values = new Float32Array(parts.reduce((n, p) => n + p.length, 0));
  let at = 0;
  for (const p of parts) {
    values.set(p, at);
    at += p.length;
  }
  return { tensors, values, optimizerStep: state?.step ?? 0, complete: state !== null };
}

/** Free a generation's stage: its tensors and its optimizer's. */
export function disposeStage(ctx: StageContext): void {
  ctx.module.dispose();
  ctx.gradientSync?.dispose();
  ctx.optimizer?.dispose();
}
