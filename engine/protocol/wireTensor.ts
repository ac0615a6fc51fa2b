import { z } from 'zod';

/**
 * How a message names the tensors in its binary payload (the payload itself is raw float32 and is
 * never parsed): a parameter or one of its optimizer slots, and its shape.
 */
export const WireTensorSchema = z.object({
  /** Parameter name, e.g. `dense_1/kernel`. */
  name: z.string(),
  /** Optimizer slot (`m`, `v`, `velocity`) or absent for the parameter's value. */
  slot: z.string().optional(),
  shape: z.array(z.number().int().min(0)),
});
export type WireTensor = z.infer<typeof WireTensorSchema>;

/** A tensor placed in a payload or a checkpoint body: offset and length in float32 elements. */
export const PlacedTensorSchema = WireTensorSchema.extend({
  offset: z.number().int().min(0),
  length: z.number().int().min(0),
});
export type PlacedTensor = z.infer<typeof PlacedTensorSchema>;

/** A tensor as one agent holds it alone: its slice of the whole (`split`) where the layer is sharded. */
export const LocalTensorSchema = WireTensorSchema.extend({
  split: z.object({ axis: z.number().int(), parts: z.number().int(), index: z.number().int(), fullShape: z.array(z.number().int()) }).optional(),
});
export type LocalTensor = z.infer<typeof LocalTensorSchema>;
