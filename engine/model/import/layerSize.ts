import type { LayerNode } from '../graph.js';
import type { Json } from './configValues.js';

/**
 * Weights one layer may hold: tfjs keeps a weight in one Float32Array, whose length V8 caps at 2^32
 * (`new Float32Array(2 ** 32 + 1)` throws "Invalid typed array length"); a layer past it could never be
 * built on any device, so it is refused when the model is read, not by an agent after the job started.
 */
export const MAX_LAYER_WEIGHTS = 2 ** 32;

/** Config fields that size a layer's weights, named in the refusal so the user sees which to shrink. */
const SIZE_FIELDS = ['units', 'filters', 'input_dim', 'output_dim', 'num_heads', 'key_dim', 'value_dim', 'n'];

/** Why a layer is too large to exist, naming its size fields and their values; undefined when it fits. */
export function layerSizeProblem(node: LayerNode, config: Json): string | undefined {
  const weights = node.params + node.nonTrainableParams;
  if (weights <= MAX_LAYER_WEIGHTS) return undefined;
  const fields = SIZE_FIELDS.filter((f) => typeof config[f] === 'number').map((f) => `${f}: ${config[f]}`);
  const sized = fields.length ? ` (${fields.join(', ')})` : '';
  return `its sizes${sized} give it ${weights.toExponential(2)} weights; one tfjs layer holds at most ${MAX_LAYER_WEIGHTS.toLocaleString('en-US')} (2^32, the longest float32 array).`;
}
