import type { LayerSpec } from '../layerSpec.js';
import { facts, product, type LayerFacts } from './common.js';

type TfjsLayerSpec = Extract<LayerSpec, { kind: 'tfjsLayer' }>;

/** Positions of a shape: its elements but the last axis (a Dense or a convolution applies its weights once per position). */
const positions = (shape: number[]) => (shape.length <= 1 ? 1 : product(shape.slice(0, -1)));

/**
 * Facts of a layer tfjs-layers built for Shoal, which has no formula of its own for it. Parameters
 * are the weights the layer declared (exact). FLOPs are an estimate: every weight takes part in one
 * multiply-add per position of the input or the output, whichever has more (exact for Dense and for
 * convolutions with 'same' padding; for a recurrent layer, per time step), plus one operation per
 * output element (an activation, a weightless layer's element-wise work). Where a run has profiled the
 * layer (agents/runtime/profileLayers.ts), the measured time replaces this in the cost model's calibration.
 */
export function tfjsLayerFacts(spec: TfjsLayerSpec, inputs: number[][]): LayerFacts {
  const trainable = spec.weights.filter((w) => w.trainable).reduce((n, w) => n + product(w.shape), 0);
  const frozen = spec.weights.filter((w) => !w.trainable).reduce((n, w) => n + product(w.shape), 0);
  const reach = Math.max(positions(spec.outputShape), ...inputs.map(positions));
  const forward = 2 * (trainable + frozen) * reach + product(spec.outputShape);
  return facts([...spec.outputShape], trainable, forward, frozen);
}
