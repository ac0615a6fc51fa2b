import * as tf from '@tensorflow/tfjs-core';
// tfjs-layers calls tensor methods (x.flatten(), …) that only the full tfjs bundle registers.
import '@tensorflow/tfjs-core/dist/public/chained_ops/register_all_chained_ops';
import '@tensorflow/tfjs-core/dist/register_all_gradients';
// The ES module build, which the agent bundle resolves to anyway: tsx and vitest would otherwise load
// the package's CommonJS build beside the ES modules multiHeadAttention.ts imports — two registries.
import * as tfl from '@tensorflow/tfjs-layers/dist/index.js';
// Keras's MultiHeadAttention, trainable and serialisable (registered in place of tfjs 4.22's).
import './multiHeadAttention.js';
import { mixSeeds } from '../../../engine/util/prng.js';

/**
 * The user's model as tfjs-layers builds it: Shoal reuses tfjs-layers for what every layer computes
 * (its `call`, initializers and weights), so a trained model behaves in tfjs exactly as it did on the
 * agents, and the runtime never becomes a second implementation of Keras. Shoal keeps the graph,
 * the stages, the gradients and the optimizer: it applies the layers one call at a time itself.
 */

/**
 * A copy of a topology whose random initializers carry seeds derived from the plan's seed and the
 * layer's name: every agent (and a one-process run) then draws the same initial weights, which the
 * synchronous invariant needs, with tfjs's own initializers.
 */
export function seededTopology(topology: unknown, seed: number): unknown {
  const walk = (value: unknown, layer: string, key: string): unknown => {
    if (Array.isArray(value)) return value.map((v, i) => walk(v, layer, `${key}/${i}`));
    if (value === null || typeof value !== 'object') return value;
    const object = value as Record<string, unknown>;
    const name = typeof object.name === 'string' ? object.name : typeof (object.config as { name?: unknown })?.name === 'string' ? (object.config as { name: string }).name : layer;
    const out: Record<string, unknown> = {};
    for (const [k, v] of Object.entries(object)) out[k] = walk(v, name, k);
    const config = out.config as Record<string, unknown> | undefined;
    if (/initializer$/i.test(key) && typeof out.class_name === 'string' && config && typeof config === 'object' && config.seed == null) {
      out.config = { ...config, seed: mixSeeds('init', seed, layer, key) % 2147483647 };
    }
    return out;
  };
  return walk(topology, '', '');
}

export async function buildLayersModel(topology: unknown, seed: number): Promise<tfl.LayersModel> {
  let model: tfl.LayersModel;
  try {
    model = await tfl.models.modelFromJSON({ modelTopology: seededTopology(topology, seed) as tf.io.ModelJSON['modelTopology'] });
  } catch (err) {
    throw new Error(`tfjs-layers cannot build this model (${(err as Error).message}). Save it with tfjs (model.save) or convert it with tensorflowjs_converter to a tfjs LayersModel.`);
  }
  freezeNestedModels(model, topology);
  return model;
}

/**
 * Keras writes `"trainable": false` on a frozen nested model's own config; tfjs-layers reads it for
 * plain layers but not for a nested model, which would then train. Apply it to every nested model
 * the file marks frozen (tfjs then reports none of its weights as trainable).
 */
function freezeNestedModels(model: tfl.LayersModel, topology: unknown): void {
  const configOf = (value: unknown): { layers?: unknown[] } | undefined => {
    let v = value as Record<string, unknown> | undefined;
    if (v && typeof v === 'object' && 'model_config' in v) v = v.model_config as Record<string, unknown>;
    return v && typeof v === 'object' && typeof v.config === 'object' ? (v.config as { layers?: unknown[] }) : undefined;
  };
  const walk = (scope: tfl.LayersModel, config: { layers?: unknown[] } | undefined) => {
    for (const entry of config?.layers ?? []) {
      const layer = entry as { class_name?: string; name?: string; config?: { name?: string; trainable?: unknown; layers?: unknown[] } };
      const name = layer.name ?? layer.config?.name;
      if (!name || !Array.isArray(layer.config?.layers)) continue;
      const nested = scope.getLayer(name);
      if (!(nested instanceof tfl.LayersModel)) continue;
      if (layer.config?.trainable === false) nested.trainable = false;
      walk(nested, layer.config);
    }
  };
  walk(model, configOf(topology));
}

/**
 * The tfjs-layers layer behind a graph node. Graph ids are `<layer>` for a layer's first call and
 * `<layer>@k` for later ones; a nested model's layers are `<call id>/<inner layer>`.
 */
export function layerOfNode(model: tfl.LayersModel, id: string): tfl.layers.Layer {
  let scope: tfl.layers.Layer = model;
  for (const part of id.split('/')) {
    const name = part.replace(/@\d+$/, '');
    if (!(scope instanceof tfl.LayersModel)) throw new Error(`Graph node "${id}": "${scope.name}" is not a model, so it has no layer "${name}".`);
    try {
      scope = scope.getLayer(name);
    } catch {
      throw new Error(`Graph node "${id}": the model has no layer "${name}".`);
    }
  }
  return scope;
}

/** A layer's weights with the names tfjs writes in a weights manifest (`<layer>/<weight>`). */
export function namedWeights(layer: tfl.layers.Layer, trainable: boolean): Array<{ name: string; variable: tf.Variable; constraint: WeightConstraint | null }> {
  const weights = trainable ? layer.trainableWeights : layer.nonTrainableWeights;
  return weights.map((w) => ({ name: w.originalName, variable: (w as unknown as { read(): tf.Variable }).read(), constraint: w.constraint ?? null }));
}

/** A layer weight's constraint (Keras's `kernel_constraint`, …): a projection applied after every update. */
export interface WeightConstraint {
  apply(w: tf.Tensor): tf.Tensor;
}

/**
 * Set weights by manifest name (pretrained weights); returns the names not found. Each must have the
 * model's shape exactly, as tfjs's loadWeights demands: a [2, 4] kernel for a [4, 2] one has the
 * right size but would be read transposed.
 */
export function assignWeights(model: tfl.LayersModel, weights: Map<string, { shape: number[]; values: Float32Array }>): string[] {
  const missing: string[] = [];
  for (const w of model.weights) {
    const weight = weights.get(w.originalName);
    if (!weight) {
      missing.push(w.originalName);
      continue;
    }
    const value = weight.values;
    const size = w.shape.reduce((a: number, b) => a * (b ?? 1), 1);
    if (value.length !== size || weight.shape.join(',') !== w.shape.join(',')) throw new Error(`Weight "${w.originalName}" has shape [${weight.shape}] (${value.length} values) in the weights file but [${w.shape}] (${size} values) in the model. Save the model and its weights together with model.save().`);
    tf.tidy(() => {
      w.write(tf.tensor(value, w.shape as number[], w.dtype));
    });
  }
  return missing;
}
