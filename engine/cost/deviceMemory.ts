import { optimizerSlots } from '../plan/optimizerOptions.js';
import type { Placement } from '../plan/placement.js';
import type { CostContext } from './costContext.js';
import type { DeviceCost } from './planCost.js';
import type { StageFacts } from './stageFacts.js';
import { zeroModelStateBytes, type OptimizerKind } from './zeroMemory.js';
import { GRADIENT_BUCKET_BYTES } from '../plan/runtimeConstants.js';
import { activationsInFlight } from '../plan/scheduleTraits.js';
import { updateTemporaries } from './updateMemory.js';

/**
 * Bytes one sample leaves for a stage's backward pass: its kept tensors at the activation precision,
 * its dropout masks as tfjs holds them (float32) or, at 16-bit, one byte each as Megatron does.
 */
export function keptBytesPerSample(f: Pick<StageFacts, 'keptValues' | 'keptMasks'>, bytesPerElement: number): number {
  return f.keptValues * bytesPerElement + f.keptMasks * (bytesPerElement >= 4 ? bytesPerElement : 1);
}

/**
 * Memory of one device at its high point in a step. Always held: the parameters, the optimizer state
 * (sharded by ZeRO over the data-parallel group) and the runtime's copies: both kept from the step's
 * start to undo a step the coordinator discards (agents/runtime/stepUndo.ts: tfjs's clone copies on
 * the wasm backend), and under ZeRO the variables of this device's chunk that the update runs on. On top, whichever is larger of the two phases: the passes (gradients, activations
 * kept for backward × micro-batches in flight, send/receive buffers) and the update (the gradients it
 * reads and every temporary it makes, engine/cost/updateMemory.ts).
 */
export function deviceMemory(ctx: CostContext, place: Placement): DeviceCost {
  const { plan, facts, microBatch: b, scale, bytesPerElement } = ctx;
  const f = facts[place.stage];
  const stage = plan.stages[place.stage];
  const optimizer: OptimizerKind = optimizerSlots(plan.optimizer);
  const state = zeroModelStateBytes(f.params, stage.dataParallel, plan.zero, ctx.options.precision ?? 'fp32', optimizer);
  // Under ZeRO the update runs on this device's chunk of the parameters, held as its own variables.
  const sharded = plan.zero >= 1 ? Math.max(1, stage.dataParallel) : 1;
  const updated = (f.params * bytesPerElement) / sharded;
  const parameters = state.parameters + f.nonTrainableParams * bytesPerElement;
  const copies = state.parameters + state.optimizer + (sharded > 1 ? updated : 0);
  const held = activationsInFlight(plan, place.stage);
  const kept = keptBytesPerSample(f, bytesPerElement);
  // With recomputation only each micro-batch's stage input is kept, plus one micro-batch's activations
  // rebuilt during its backward pass.
  const activations = plan.recompute ? (f.liveInBytes * scale * held + kept) * b : kept * b * held;
  const bucket = ctx.options.allReduceBucketBytes ?? GRADIENT_BUCKET_BYTES;
  const gradientBytes = f.params * bytesPerElement;
  const buffers = 2 * b * (f.liveInBytes + f.liveOutBytes) * scale + (stage.dataParallel > 1 ? 2 * Math.min(bucket || gradientBytes, gradientBytes) : 0);
  const update = updated * (1 + updateTemporaries(plan.optimizer));
  const total = parameters + state.optimizer + copies + Math.max(state.gradients + activations + buffers, update);
  const capacityBytes = ctx.cluster.devices[place.device].memoryBytes;
  return {
    device: place.device,
    rank: place.rank,
    stage: place.stage,
    replica: place.replica,
    shard: place.shard,
    memory: { parameters, gradients: state.gradients, optimizer: state.optimizer, copies, activations, buffers, update, total },
    capacityBytes,
    fits: total <= capacityBytes,
  };
}
