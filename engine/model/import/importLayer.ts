import type { Diagnostic } from '../../plan/diagnostics.js';
import type { GraphBuilder } from '../builder.js';
import { product } from '../facts/common.js';
import type { LayerSpec } from '../layerSpec.js';
import { ConfigError, SizeError, UnsupportedOption } from './configValues.js';
import type { KerasLayer } from './kerasDocument.js';
import { kerasLayerSpec } from './kerasLayers.js';
import type { LayerLibrary } from './layerLibrary.js';
import { layerSizeProblem } from './layerSize.js';

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

const LAYERS_HINT = 'If it is a layer class of your own, pass the JavaScript module that registers it with --layers FILE (a module exporting register(tf)); otherwise replace it with built-in Keras layers.';

/**
 * Adds one layer call to the graph. Shoal's own spec of the class comes first, where it has one (the
 * planner and tensor sharding need its structure); any other class tfjs-layers knows — the user's
 * registered classes included — is built by tfjs-layers (`library`), which gives its shapes and
 * weights. Never throws for a bad layer: an unknown class or a layer that does not fit becomes an
 * opaque node plus a diagnostic, so one odd layer does not cost the user the rest of the model.
 */
export function importLayer(builder: GraphBuilder, call: LayerCall, diagnostics: Diagnostic[], library?: LayerLibrary): void {
  const { layer, id, inputs } = call;
  const inputShapes = inputs.map((i) => builder.shapeOf(i));
  const where = `Layer "${id}" (${layer.className})`;
  const opaque = (severity: Diagnostic['severity'], code: string, message: string, hint: string) => {
    diagnostics.push({ severity, code, message, where: { layer: id }, hint });
    builder.add(id, { kind: 'opaque', className: layer.className, config: layer.config }, inputs);
    const node = builder.node(id);
    if (call.shapeHint) {
      node.outputShape = call.shapeHint;
      node.activationBytes = 4 * product(call.shapeHint);
    }
  };
  /** Inputs whose shape Shoal only assumed (an opaque layer's): a misfit may be theirs, not this layer's. */
  const assumed = inputs.filter((i) => builder.node(i).spec.kind === 'opaque');
  const misfit = (reason: string) =>
    opaque(
      'error',
      'shape-mismatch',
      `${where} does not fit its inputs [${inputShapes.map((s) => `[${s}]`).join(', ')}]: ${reason}${assumed.length ? ` Its input ${assumed.map((a) => `"${a}"`).join(', ')} is a layer Shoal could not build, whose output shape is only assumed: fix that layer first.` : ''}`,
      'Check this layer\'s configuration and the shapes feeding it.',
    );
  const fromLibrary = library?.knows(layer.className) ? () => tfjsLayerSpec(library, layer, inputShapes) : undefined;

  let spec: LayerSpec | undefined;
  try {
    spec = kerasLayerSpec(layer.className, layer.config, inputShapes);
  } catch (err) {
    if (!(err instanceof ConfigError)) throw err;
    if (err instanceof SizeError) {
      opaque('error', 'invalid-layer-size', `${where}: ${err.message}`, 'Give the layer a positive size (units, filters, heads); a zero or negative one is a mistake in the model file.');
      return;
    }
    if (!(err instanceof UnsupportedOption)) {
      opaque('error', 'invalid-layer-config', `${where}: ${err.message}`, `Fix that field of "${id}" in the model file (Keras and tfjs write it as model.save() left it).`);
      return;
    }
    if (!fromLibrary) {
      opaque('warning', 'unsupported-layer-config', `${where}: ${err.message} It is kept as an opaque layer without parameters.`, 'Its parameters and costs are not counted; simplify the layer or read the estimate with that in mind.');
      return;
    }
  }
  if (!spec && fromLibrary) {
    try {
      spec = fromLibrary();
    } catch (err) {
      misfit(`tfjs-layers cannot build it: ${(err as Error).message}`);
      return;
    }
  }
  if (!spec) {
    const nested = NESTED_MODELS.has(layer.className);
    opaque(
      'warning',
      nested ? 'nested-model' : 'unknown-layer',
      nested
        ? `Layer "${id}" is a nested ${layer.className} model without a readable layer list; Shoal keeps it as one opaque layer without parameters.`
        : `Layer "${id}" has class ${layer.className}, which neither tfjs-layers nor a --layers module registers; it is kept as an opaque layer without parameters, its output shape assumed equal to its input's.`,
      nested ? 'Re-export the model so the nested model\'s config lists its layers.' : LAYERS_HINT,
    );
    return;
  }
  try {
    builder.add(id, spec, inputs);
  } catch (err) {
    const reason = (err as Error).message.replace(/^Model "[^"]*", layer "[^"]*": /, '');
    // Shoal's formula refuses it: tfjs-layers, the source of truth, has the last word where it knows the class.
    let built: LayerSpec | undefined;
    try {
      built = fromLibrary?.();
    } catch (libraryErr) {
      misfit(`tfjs-layers cannot build it: ${(libraryErr as Error).message}`);
      return;
    }
    if (!built) {
      misfit(reason);
      return;
    }
    builder.add(id, built, inputs);
  }
  const node = builder.node(id);
  const tooBig = layerSizeProblem(node, layer.config);
  if (tooBig) diagnostics.push({ severity: 'error', code: 'invalid-layer-size', message: `${where}: ${tooBig}`, where: { layer: id }, hint: 'Use smaller sizes (units, filters, dimensions): no device holds such a layer.' });
  if (call.shared) {
    node.params = 0;
    node.nonTrainableParams = 0;
  } else if (call.frozen || layer.config.trainable === false) {
    node.nonTrainableParams += node.params;
    node.params = 0;
  }
}

/** The spec of a layer as tfjs-layers builds it; throws tfjs's reason when it cannot. */
function tfjsLayerSpec(library: LayerLibrary, layer: KerasLayer, inputShapes: number[][]): LayerSpec {
  const built = library.build(layer.className, layer.config, inputShapes);
  return { kind: 'tfjsLayer', className: layer.className, config: layer.config, outputShape: built.outputShape, weights: built.weights };
}
