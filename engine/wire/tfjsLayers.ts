import * as tf from '@tensorflow/tfjs-core';
// The ES module build, as the agents load it (agents/exec/graph/layersModel.ts): one registry of classes.
import * as tfl from '@tensorflow/tfjs-layers/dist/index.js';

/**
 * The `@tensorflow/tfjs` namespace as a user's code sees it — tfjs-core's functions plus tfjs-layers'
 * `layers`, `serialization` and friends — built from the packages Shoal ships. A user's `--layers`
 * module registers its classes on it (userLayers.ts); the importer and the agents read the same registry.
 */
export const tfjs = { ...tf, ...tfl, layers: tfl.layers, serialization: tf.serialization } as const;

export type TfjsNamespace = typeof tfjs;

/** The classes registered with tfjs's serialization map (layers, models, initializers, …), by name. */
export function registeredClasses(): Record<string, [unknown, unknown]> {
  return tf.serialization.SerializationMap.getMap().classNameMap as Record<string, [unknown, unknown]>;
}

/** Whether a registered class is a layer (a model, an initializer or an optimizer is not). */
export function isLayerClass(cls: unknown): boolean {
  return typeof cls === 'function' && cls.prototype instanceof tfl.layers.Layer;
}
