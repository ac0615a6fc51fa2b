import { z } from 'zod';
import type { LayerNode } from '../model/graph.js';

/**
 * SBP signatures (OneFlow, AutoDDL) say how a tensor is laid out over the devices of one tensor-
 * parallel group (a stage replica's `tensorParallel` devices):
 *   S(k)  Split: each device holds an equal slice along axis k.
 *   B     Broadcast: each device holds the whole tensor.
 *   P     Partial sum: each device holds a tensor of the full shape; the true value is their sum.
 * Activation axes count the batch as axis 0; weight axes follow tfjs's storage, e.g. a Dense kernel
 * is [inputFeatures, units] and a Conv2D kernel is [height, width, inChannels, filters].
 *
 * For a Dense layer y = x·W (x: [batch, in], W: [in, units], y: [batch, units]):
 *   replicated (plain data parallel)  W: B      → y: B (within the group)
 *   column-parallel (Megatron's 1st)  W: S(1)   → y: S(1): each device computes a slice of the units
 *   row-parallel (Megatron's 2nd)     W: S(0)   → y: P: each device multiplies its slice of the inputs
 *                                                  (x: S(1)), and the sum over devices is the output
 *   class-dimension sharding (Whale)  the classifier column-parallel: W: S(1) over the classes, logits
 *                                     S(1); softmax cross-entropy combines per-shard max and sum
 *                                     instead of gathering every class's logit.
 * A layer's `output` may also name the layout after a collective: P → B is an all-reduce, P → S(k) a
 * reduce-scatter, S(k) → B an all-gather. Only a split of the contracted axis produces P.
 */
export type WeightSbp = 'B' | `S(${number})`;
export type Sbp = WeightSbp | 'P';

const SPLIT = /^S\((\d)\)$/;
const isWeightSbp = (v: unknown): v is WeightSbp => v === 'B' || (typeof v === 'string' && SPLIT.test(v));

export const WeightSbpSchema = z.custom<WeightSbp>(isWeightSbp, { message: 'Use "B" (broadcast) or "S(k)" (split along weight axis k)' });
export const SbpSchema = z.custom<Sbp>((v) => v === 'P' || isWeightSbp(v), { message: 'Use "B" (broadcast), "P" (partial sum) or "S(k)" (split along axis k)' });

export const LayerShardingSchema = z.object({
  /** Layout of the layer's main weight (kernel) over the tensor-parallel group. */
  weight: WeightSbpSchema.default('B'),
  /** Layout of the layer's output; absent: the layout the weight's split produces with no collective. */
  output: SbpSchema.optional(),
});
export type LayerSharding = z.infer<typeof LayerShardingSchema>;

/** The axis of `S(k)`, or undefined for B and P. */
export function splitAxis(sbp: Sbp): number | undefined {
  const match = SPLIT.exec(sbp);
  return match ? Number(match[1]) : undefined;
}

/** How a layer's main weight can be split, for the layer kinds Shoal knows how to shard. */
export interface WeightLayout {
  /** The weight's shape, as tfjs stores it. */
  shape: number[];
  /** Axis summed over by the layer: splitting it leaves each device a partial sum (row-parallel). */
  contracted: number;
  /** Axis that becomes an output feature axis: splitting it splits the output (column-parallel). */
  produced: number;
  /** The output axis (batch = 0) that a split of the produced axis splits. */
  outputAxis: number;
}

export function weightLayout(layer: LayerNode, inputShape: number[]): WeightLayout | undefined {
  const spec = layer.spec;
  const features = inputShape[inputShape.length - 1];
  // Output axis of the produced features: the last one (the batch counts as axis 0).
  const lastOutputAxis = layer.outputShape.length;
  switch (spec.kind) {
    case 'dense':
    case 'denseNd':
      return { shape: [features, spec.units], contracted: 0, produced: 1, outputAxis: lastOutputAxis };
    // An embedding is a one-hot matmul: splitting the vocabulary leaves partial sums (Megatron's
    // vocabulary-parallel embedding), splitting the vector splits the output's last axis.
    case 'embedding':
      return { shape: [spec.inputDim, spec.outputDim], contracted: 0, produced: 1, outputAxis: lastOutputAxis };
    // Attention's query/key/value kernels are [features, heads, size]: split by heads, each device
    // attends with its heads, and the output projection's partial sums are completed by an all-reduce.
    case 'multiHeadAttention':
      return { shape: [features, spec.numHeads, spec.keyDim], contracted: 0, produced: 1, outputAxis: lastOutputAxis };
    case 'conv2d':
      return { shape: [...spec.kernelSize, features, spec.filters], contracted: 2, produced: 3, outputAxis: lastOutputAxis };
    case 'conv':
      return { shape: [...spec.kernelSize, features, spec.filters], contracted: spec.rank, produced: spec.rank + 1, outputAxis: lastOutputAxis };
    default:
      return undefined;
  }
}

/** The output layout a weight layout yields without any collective. */
export function naturalOutput(weight: WeightSbp, layout: WeightLayout | undefined): Sbp {
  const axis = splitAxis(weight);
  if (axis === undefined || !layout) return 'B';
  if (axis === layout.contracted) return 'P';
  return axis === layout.produced ? `S(${layout.outputAxis})` : 'B';
}
