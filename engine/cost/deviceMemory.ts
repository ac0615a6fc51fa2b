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
 * Activations as a runtime keeping only what backward needs holds them (Korthikanti et al.'s count,
 * at 16-bit for mixed precision). With recomputation only each micro-batch's stage input is kept, plus
 * one micro-batch's activations rebuilt during its backward pass.
 */
function minimalActivationBytes(ctx: CostContext, stage: number, held: number): number {
  const { plan, facts, microBatch: b, scale, bytesPerElement } = ctx;
  const f = facts[stage];
  const kept = keptBytesPerSample(f, bytesPerElement);
  return plan.recompute ? (f.liveInBytes * scale * held + kept) * b : kept * b * held;
}

/**
 * Activations as the agents' tfjs executor holds them (agents/exec/graph/graphStage.ts, float32). The
 * last stage turns each micro-batch around under one tape (engine/model/facts/tape.ts): one
 * micro-batch's tape at a time. A stage that recomputes keeps each micro-batch's input and runs one
 * tape in its backward pass. Any other stage keeps every layer's output per micro-batch in flight and
 * goes back layer by layer, one layer's tape at a time.
 */
function tfjsActivationBytes(ctx: CostContext, stage: number, held: number): number {
  const { plan, facts, microBatch: b } = ctx;
  const f = facts[stage];
  const last = stage === plan.stages.length - 1;
  const fixed = 4 * f.tapeFixed;
  if (plan.recompute) return 4 * b * (f.liveInBytes / 4) * (last ? 1 : held) + 4 * b * f.tapeValues + fixed;
  if (last) return 4 * b * f.tapeValues + fixed;
  return 4 * b * (f.outputValues * held + f.largestTape) + fixed;
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
  const tfjs = ctx.options.activations === 'tfjs' && bytesPerElement === 4;
  const activations = tfjs ? tfjsActivationBytes(ctx, place.stage, held) : minimalActivationBytes(ctx, place.stage, held);
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
