import type { Diagnostic } from '../../plan/diagnostics.js';
import type { GraphBuilder } from '../builder.js';
import { product } from '../facts/common.js';
import { ConfigError, SizeError } from './configValues.js';
import type { KerasLayer } from './kerasDocument.js';
import { kerasLayerSpec } from './kerasLayers.js';

const NESTED_MODELS = new Set(['Sequential', 'Functional', 'Model']);

/** How one call of a Keras layer enters the graph. */
export interface LayerCall {
  layer: KerasLayer;
  id: string;
  inputs: string[];
  /** A later call of a shared layer: it reuses the first call's weights. */
  shared: boolean;
  /** Inside a nested model marked `trainable: false`. */
  frozen: boolean;
  /** The output shape Keras 3 recorded for this call (batch dropped), if any. */
  shapeHint?: number[];
}

/**
 * Adds one layer call to the graph. Never throws for a bad layer: an unknown class, an unsupported
 * option or a shape that does not fit becomes an opaque node plus a diagnostic, so one odd layer does
 * not cost the user the rest of the model.
 */
export function importLayer(builder: GraphBuilder, call: LayerCall, diagnostics: Diagnostic[]): void {
  const { layer, id, inputs } = call;
  const inputShapes = inputs.map((i) => builder.shapeOf(i));
  const opaque = (severity: Diagnostic['severity'], code: string, message: string, hint: string) => {
    diagnostics.push({ severity, code, message, where: { layer: id }, hint });
    builder.add(id, { kind: 'opaque', className: layer.className, config: layer.config }, inputs);
    const node = builder.node(id);
    if (call.shapeHint) {
      node.outputShape = call.shapeHint;
      node.activationBytes = 4 * product(call.shapeHint);
    }
  };
  let spec;
  try {
    spec = kerasLayerSpec(layer.className, layer.config, inputShapes);
  } catch (err) {
    if (!(err instanceof ConfigError)) throw err;
    if (err instanceof SizeError) {
      opaque('error', 'invalid-layer-size', `Layer "${id}" (${layer.className}): ${err.message}`, 'Give the layer a positive size (units, filters, heads); a zero or negative one is a mistake in the model file.');
      return;
    }
    opaque('warning', 'unsupported-layer-config', `Layer "${id}" (${layer.className}): ${err.message} It is kept as an opaque layer without parameters.`, 'Its parameters and costs are not counted; simplify the layer or read the estimate with that in mind.');
    return;
  }
  if (!spec) {
    const nested = NESTED_MODELS.has(layer.className);
    opaque(
      'warning',
      nested ? 'nested-model' : 'unknown-layer',
      nested
        ? `Layer "${id}" is a nested ${layer.className} model without a readable layer list; Shoal keeps it as one opaque layer without parameters.`
        : `Layer "${id}" has class ${layer.className}, which Shoal does not know; it is kept as an opaque layer without parameters, its output shape assumed equal to its input's.`,
      nested ? 'Re-export the model so the nested model\'s config lists its layers.' : 'If the layer has weights or changes the shape, replace it with a known layer for accurate costs.',
    );
    return;
  }
  try {
    builder.add(id, spec, inputs);
  } catch (err) {
    const reason = (err as Error).message.replace(/^Model "[^"]*", layer "[^"]*": /, '');
    opaque('error', 'shape-mismatch', `Layer "${id}" (${layer.className}) does not fit its inputs: ${reason}`, 'Check the layer configuration and the shapes feeding it.');
    return;
  }
  const node = builder.node(id);
  if (call.shared) {
    node.params = 0;
    node.nonTrainableParams = 0;
  } else if (call.frozen || layer.config.trainable === false) {
    node.nonTrainableParams += node.params;
    node.params = 0;
  }
}
